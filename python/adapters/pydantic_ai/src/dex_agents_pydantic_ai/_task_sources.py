"""Toolsets whose tools a tool source runs whole, so a call may start a remote task.

`McpSourceToolset` is one: its calls, their task polls and their cancellation go
to the `McpToolSource` directly instead of through a Pydantic AI run, which
also means a tool Step needs no listing of the MCP servers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from dex_agents._runner.capabilities import ToolTaskCancellation, ToolTaskPoll, ToolTaskPollOutcome
from dex_agents.runner import DeferredToolExecution, DeferredToolOutcome
from pydantic_ai.toolsets import AbstractToolset

__all__ = ["TaskSource", "TaskSourceToolset", "task_source_for"]


class TaskSource(Protocol):
    """The part of a tool source (e.g. `McpToolSource`) that runs and follows calls."""

    async def execute_deferred_tool_call(
        self, call: DeferredToolExecution
    ) -> DeferredToolOutcome: ...

    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome: ...

    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None: ...


@runtime_checkable
class TaskSourceToolset(Protocol):
    """A toolset that names the source owning a call record's reference."""

    def task_source_for(self, tool_source_reference: str) -> TaskSource | None: ...


def task_source_for(
    toolsets: Sequence[AbstractToolset[Any]], tool_source_reference: str | None
) -> TaskSource | None:
    """The source of the (leaf) toolset owning the reference, or None."""
    if not tool_source_reference:
        return None
    found: list[TaskSource] = []

    def visit(toolset: AbstractToolset[Any]) -> None:
        if not found and isinstance(toolset, TaskSourceToolset):
            source = toolset.task_source_for(tool_source_reference)
            if source is not None:
                found.append(source)

    for toolset in toolsets:
        toolset.apply(visit)
    return found[0] if found else None
