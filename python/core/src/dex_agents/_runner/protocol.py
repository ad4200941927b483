"""The runner protocol: what a framework adapter implements (see `dex_agents.runner`).

Its values are in `dex_agents._runner.values`; the optional capabilities are in
`dex_agents._runner.capabilities`.
"""

from __future__ import annotations

from typing import Generic, Protocol, runtime_checkable

from typing_extensions import TypeVar

from dex_agents._runner.awaitables import MaybeAwaitable
from dex_agents._runner.values import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkMessage,
    ToolExecutionResult,
)

ToolOutcomeT_co = TypeVar("ToolOutcomeT_co", covariant=True, default=ToolExecutionResult)


@runtime_checkable
class AgentFrameworkRunner(Protocol, Generic[ToolOutcomeT_co]):
    """A framework adapter: one model call per Step, tools deferred to their own Steps."""

    def build_user_message(self, text: str) -> MaybeAwaitable[FrameworkMessage]:
        """The framework's user message for `text`.

        A plain method for a runner in this process; a runner that must ask another
        process (RemoteRunner) makes it a coroutine function, and the session awaits it.
        """
        ...

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        """Make at most one model call; run no tool that can be deferred."""
        ...

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolOutcomeT_co:
        """Run the real tool once; raise ToolExecutionError for a failure the model sees."""
        ...
