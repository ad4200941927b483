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
    AgentFrameworkRunner AgentTurnContext AgentTurnOutcome declare_capabilities
    DeferredToolCall DeferredToolExecution DeferredToolOutcome dex_run_info DexRunInfo
    FrameworkItemError FrameworkMessage heartbeats McpSources ModelCallMetadata
    parse_tool_arguments PendingCall result_texts RunnerCapabilities running RunStateError
    RunStateFormat tool_output_text ToolCallsRequested ToolExecutionError
    ToolExecutionResult ToolInputRequested ToolRouter ToolTaskStarted TurnCompleted
    TurnContinued
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


def test_the_adapter_api_stays_small() -> None:
    """Issue 42: an adapter author's import holds what they need, 30 names at most."""
    assert len(dex_agents.runner.__all__) <= 30
