"""A runner's MCP sources: their tools by name, and which source owns a recorded call.

Every adapter that accepts `McpToolSource`s turns the listed tools into framework
tools of its own, then hands the tool Steps' calls back to the owning source. The
lookups and the task delegation are the same for all of them, so they live here.
The sources are typed by what the runners use of them, not as `McpToolSource`, so
this module imports nothing of `dex_agents.mcp` and never loads the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from dex_agents._runner.capabilities import (
        ToolTaskCancellation,
        ToolTaskPoll,
        ToolTaskPollOutcome,
    )
    from dex_agents._runner.values import DeferredToolExecution, DeferredToolOutcome

__all__ = ["ListedTool", "ListingTaskSource", "McpSourceTasks", "McpSources", "ToolTaskOwner"]


class ListedTool(Protocol):
    """A listed tool: runners only need its name here (an `McpTool`)."""

    @property
    def name(self) -> str: ...


ToolT = TypeVar("ToolT", bound=ListedTool)
ToolT_co = TypeVar("ToolT_co", bound=ListedTool, covariant=True)


class ToolTaskOwner(Protocol):
    """A source that runs the calls it `owns` itself, so they may start remote tasks.

    Both the adapters' MCP sources and Stepwise's task sources (its `TaskToolSource`)
    take a call record's polls and cancellation this way.
    """

    def owns(self, tool_source_reference: str) -> bool:
        """Whether a call record's reference names one of this source's tools."""
        ...

    async def execute_deferred_tool_call(
        self, call: DeferredToolExecution
    ) -> DeferredToolOutcome: ...

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome: ...

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None: ...


class ListingTaskSource(ToolTaskOwner, Protocol[ToolT_co]):
    """What an adapter asks of an MCP source (an `McpToolSource`): its listing too."""

    async def list_tools(self, *, taken: Sequence[str] = ()) -> Sequence[ToolT_co]: ...

    def tool(self, name: str) -> ToolT_co | None: ...


class McpSources(Generic[ToolT]):
    """The MCP sources one runner was given, in the order the tools are offered."""

    def __init__(self, sources: Sequence[ListingTaskSource[ToolT]] = ()) -> None:
        self.sources: list[ListingTaskSource[ToolT]] = list(sources)

    async def list_tools(self, taken: Sequence[str] = ()) -> list[ToolT]:
        """Every source's tools; a name `taken` by the agent or an earlier source is left out.

        The sources cache their listings, so a runner may call this once per turn.
        """
        tools: list[ToolT] = []
        names = list(taken)
        for source in self.sources:
            for tool in await source.list_tools(taken=names):
                tools.append(tool)
                names.append(tool.name)
        return tools

    def listed(self, tool_name: str) -> ToolT | None:
        """The listed MCP tool of that name, or None when it is the agent's own."""
        for source in self.sources:
            tool = source.tool(tool_name)
            if tool is not None:
                return tool
        return None

    def owner(self, tool_source_reference: str | None) -> ListingTaskSource[ToolT] | None:
        """The source whose reference a tool call record carries; None for other tools."""
        if not tool_source_reference:
            return None
        return next((s for s in self.sources if s.owns(tool_source_reference)), None)

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        """The owning source's poll; only MCP calls start tasks in these adapters."""
        source = self.owner(poll.tool_call.tool_source_reference)
        if source is None:  # not a ToolExecutionError: the call is recorded by its effect
            raise RuntimeError(
                f"no MCP source of this runner owns the task of {poll.tool_call.tool_name!r}"
            )
        return await source.poll_tool_task(poll)

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        """Cancels through the owning source; a task nobody owns has nothing to cancel."""
        source = self.owner(cancellation.tool_call.tool_source_reference)
        if source is not None:
            await source.cancel_tool_task(cancellation)


class McpSourceTasks:
    """A runner's `ToolTaskPoller` and `ToolTaskCanceller` for the MCP sources in `_mcp`.

    Only MCP calls start tasks in the adapters that take sources, so each poll
    and cancel goes to the call's owning source; a runner mixes this in rather
    than forwarding both methods itself.
    """

    _mcp: McpSources[Any]

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome:
        return await self._mcp.poll_tool_task(poll)

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None:
        await self._mcp.cancel_tool_task(cancellation)
