"""Tool sources: tools a Stepwise agent learns at run time (for example MCP servers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from dex_agents._runner.mcp_sources import ToolTaskOwner
from dex_agents.stepwise._tools import Tool

__all__ = ["TaskToolSource", "ToolSource"]


@runtime_checkable
class ToolSource(Protocol):
    """Lists tools once per Worker, and rebuilds one from its stored reference.

    The runner lists a source before the first model call a Worker makes; a
    tool Step instead rebuilds its tool from the call record's
    `tool_source_reference`, so it needs no listing.
    """

    async def stepwise_tools(self, taken: Sequence[str]) -> Sequence[Tool]:
        """The source's tools, leaving out names in `taken` (the agent's own tools)."""
        ...

    def stepwise_tool(self, tool_name: str, tool_source_reference: str) -> Tool | None:
        """The tool a call record names, or None when it is not this source's."""
        ...


@runtime_checkable
class TaskToolSource(ToolSource, ToolTaskOwner, Protocol):
    """A source whose tools may start remote tasks (for example `McpToolSource`).

    `StepwiseRunner` hands such a source every call whose record it `owns` whole,
    so the source can return `ToolTaskStarted`, and the task's polls and its
    cancellation, instead of running the tool as a plain function.
    """
