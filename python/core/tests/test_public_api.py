"""The public names of `dex_agents` and `dex_agents.runner`, pinned.

A name that disappears or appears here is an API change: update the list on
purpose, in the same change that announces it.
"""

from __future__ import annotations

import types

import dex_agents
import dex_agents.runner
import pytest

# Sorted, case-insensitively; each module's own list is grouped by topic.
APPLICATION_NAMES = """
    agent_registry AgentSessionClient AgentSessionError AgentSessionFlow AgentSessionOptions
    AgentSessionRunError AgentWorker ClientRequestIdReusedError CompactionPolicy RemoteRunner
    RemoteRunnerError RemoteRunnerUnavailableError run_worker SessionAlreadyStartedError
    SessionNotFoundError SessionUnavailableError ToolEffect ToolPolicy TracingOptions UserError
    ValueTooLarge
""".split()  # noqa: SIM905 - several names a line keep the pin readable

ADAPTER_NAMES = """
    AgentFrameworkRunner AgentTurnContext AgentTurnOutcome APPROVAL_DEADLINE_PASSED
    arguments_text BUILT_IN_TOOL_DEFINITIONS BUILT_IN_TOOL_NAMES BUILT_IN_TOOL_POLICY
    BuiltInToolName ContextCompactionRunner ContextSummaryRequest ContextSummaryResult
    declare_capabilities declared_approval DecodedItemCache
    DEFAULT_HEARTBEAT_INTERVAL_SECONDS DEFAULT_ITEM_CACHE_BYTES DEFAULT_REQUIRES_APPROVAL
    default_tool_effect DeferredToolCall DeferredToolExecution DeferredToolOutcome
    DescribedRunner dex_run_info DexRunInfo EventWriter failed_turn_messages FakeSession
    framework_version FrameworkItemError FrameworkMessage Heartbeat heartbeats
    invalid_tool_call_ids is_final McpSources model_tool_call_id_problem
    model_visible_result ModelCallMetadata no_checkpoint no_heartbeat NO_RESULT_TEXT
    NullEventWriter offered_built_ins OUTCOME_UNKNOWN_RESULT parse_tool_arguments
    pending_records PendingCall PlanModeRunner RecordingEventWriter ReservedToolNameError
    resolve_tool_policy ResolvedToolPolicy result_text
    result_texts run_sync RunnerCapabilities running RunStateError RunStateFormat
    SourcedTool stored_message stored_result TOOL_CALL_NOT_RUN_ERROR_PREFIX
    tool_call_status_text tool_effect_from_annotations tool_effect_named
    TOOL_EFFECTS_BY_NAME tool_output_text ToolCallsRequested ToolExecutionError
    ToolExecutionResult ToolInputRequested ToolRouter ToolTaskCancellation ToolTaskCanceller
    ToolTaskPending ToolTaskPoll ToolTaskPoller ToolTaskPollOutcome ToolTaskStarted
    turn_failure_note TurnCompleted TurnContinued UnfinishedTurnMessageBuilder
    USER_REJECTED_RESULT with_stored_results
""".split()  # noqa: SIM905 - several names a line keep the pin readable


@pytest.mark.parametrize(
    ("module", "names"),
    [(dex_agents, APPLICATION_NAMES), (dex_agents.runner, ADAPTER_NAMES)],
    ids=["dex_agents", "dex_agents.runner"],
)
def test_exports_are_pinned_and_importable(module: types.ModuleType, names: list[str]) -> None:
    assert sorted(module.__all__, key=str.lower) == names
    for name in names:
        assert getattr(module, name) is not None, name


def test_no_name_is_listed_in_both() -> None:
    assert not set(dex_agents.__all__) & set(dex_agents.runner.__all__)


def test_the_top_level_has_no_public_name_outside_its_list() -> None:
    public = {
        name
        for name, value in vars(dex_agents).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public - {"annotations"} == set(dex_agents.__all__)
