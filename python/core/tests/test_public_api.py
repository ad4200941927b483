"""The public names of `dex_agents` and `dex_agents.runner`, pinned.

A name that disappears or appears here is an API change: update the list on
purpose, in the same change that announces it.
"""

from __future__ import annotations

import types

import dex_agents
import dex_agents.runner
import pytest

APPLICATION_NAMES = [
    # the Flow
    "AgentSessionFlow",
    # options and policies
    "AgentSessionOptions",
    "CompactionPolicy",
    "ToolPolicy",
    "ToolEffect",
    # client and worker
    "AgentSessionClient",
    "AgentWorker",
    "agent_registry",
    "run_worker",
    # errors
    "AgentSessionError",
    "UserError",
    "AgentSessionRunError",
    "SessionNotFoundError",
    "SessionAlreadyStartedError",
    "ValueTooLarge",
]

ADAPTER_NAMES = [
    # the protocol
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "TurnCompleted",
    "ToolCallsRequested",
    "TurnContinued",
    "FrameworkMessage",
    "ModelCallMetadata",
    "EventWriter",
    "Heartbeat",
    # tool execution
    "DeferredToolCall",
    "DeferredToolExecution",
    "DeferredToolOutcome",
    "ToolExecutionResult",
    "ToolExecutionError",
    "ToolInputRequested",
    "ToolTaskStarted",
    # optional capabilities
    "UnfinishedTurnMessageBuilder",
    "ToolTaskPoller",
    "ToolTaskPoll",
    "ToolTaskPending",
    "ToolTaskPollOutcome",
    "ToolTaskCanceller",
    "ToolTaskCancellation",
    "ContextCompactionRunner",
    "ContextSummaryRequest",
    "ContextSummaryResult",
    "PlanModeRunner",
    # rules for what the model asked for
    "invalid_tool_call_ids",
    "model_tool_call_id_problem",
    "resolve_tool_policy",
    "ResolvedToolPolicy",
    "DEFAULT_REQUIRES_APPROVAL",
    "default_tool_effect",
    "TOOL_EFFECTS_BY_NAME",
    "tool_effect_named",
    "tool_effect_from_annotations",
    "BuiltInToolName",
    "BUILT_IN_TOOL_NAMES",
    "BUILT_IN_TOOL_POLICY",
    "BUILT_IN_TOOL_DEFINITIONS",
    # what the model sees for final tool calls
    "is_final",
    "model_visible_result",
    "tool_call_status_text",
    "turn_failure_note",
    "USER_REJECTED_RESULT",
    "OUTCOME_UNKNOWN_RESULT",
    "NO_RESULT_TEXT",
    "APPROVAL_DEADLINE_PASSED",
    "TOOL_CALL_NOT_RUN_ERROR_PREFIX",
    # offline doubles
    "FakeSession",
    "RecordingEventWriter",
    "NullEventWriter",
    "no_heartbeat",
    "no_checkpoint",
    "run_sync",
    "stored_message",
]


@pytest.mark.parametrize(
    ("module", "names"),
    [(dex_agents, APPLICATION_NAMES), (dex_agents.runner, ADAPTER_NAMES)],
    ids=["dex_agents", "dex_agents.runner"],
)
def test_exports_are_pinned_and_importable(module: types.ModuleType, names: list[str]) -> None:
    assert module.__all__ == names
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
