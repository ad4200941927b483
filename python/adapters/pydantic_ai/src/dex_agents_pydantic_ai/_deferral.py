"""Toolset wrappers that keep every tool call out of the RunModel Step.

Pydantic AI runs an ordinary tool that arrives in the same response as a
deferred one before it stops, so deferring only gated tools would let the other
tools run inside RunModel. `DeferEveryTool` wraps the agent's whole (non-output)
toolset for a model Step, so every call ends the run as a deferred request, and
records each tool's definition so the runner can read its metadata. It also
adds the session's enabled built-ins as external tools (see `_built_ins`) and
refuses an application tool that takes one of their names.
`ApproveEveryTool` is the tool Step's counterpart: every tool needs approval,
and the runner approves exactly the one call it runs; a tool of an
`ExternalToolset`, whose result only ever comes from outside the agent, fails
the call with a message for the model instead of an error that would fail the
Step.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from dex_agents.runner import ToolExecutionError
from pydantic_ai import CallDeferred, RunContext, ToolDefinition
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.toolsets import (
    AbstractToolset,
    ApprovalRequiredToolset,
    ToolsetTool,
    WrapperToolset,
)

from dex_agents_pydantic_ai._built_ins import check_reserved, with_built_ins

__all__ = ["ApproveEveryTool", "DeferEveryTool"]


@dataclass
class _DeferringToolset(WrapperToolset[Any]):
    seen: dict[str, ToolDefinition] = field(default_factory=dict)
    reserved: frozenset[str] = frozenset()
    hidden: bool = False

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if self.hidden:
            return {}
        tools = await super().get_tools(ctx)
        # Checked on every listing: toolsets (MCP servers, `prepare` functions) can
        # change their tools from one model call to the next.
        check_reserved(tools, self.reserved)
        self.seen.update({name: tool.tool_def for name, tool in tools.items()})
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        raise CallDeferred


@dataclass
class DeferEveryTool(AbstractCapability[Any]):
    """Per-run capability: no tool of the agent runs; every call becomes a deferred request."""

    built_ins: list[ToolDefinition] = field(default_factory=list)
    """The session's enabled built-ins, offered as external tools."""
    seen: dict[str, ToolDefinition] = field(default_factory=dict)
    """The application tools the model was offered, by name (filled during the run)."""
    hide_agent_tools: bool = False
    """A planning turn: the model is offered the built-ins alone."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        reserved = frozenset(tool.name for tool in self.built_ins)
        deferring = _DeferringToolset(
            toolset, seen=self.seen, reserved=reserved, hidden=self.hide_agent_tools
        )
        return with_built_ins(deferring, self.built_ins)


@dataclass
class _RunnableOnly(WrapperToolset[Any]):
    """Turns a call of an external tool into a failure the model sees.

    Pydantic AI refuses to call a tool of kind `external` with a plain
    RuntimeError, which would fail the Step attempt; listing such a tool as an
    ordinary one lets this wrapper refuse it with `ToolExecutionError` instead.
    """

    external: set[str] = field(default_factory=set)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        self.external = {name for name, tool in tools.items() if tool.tool_def.kind == "external"}
        return {
            name: replace(tool, tool_def=replace(tool.tool_def, kind="function"))
            if name in self.external
            else tool
            for name, tool in tools.items()
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if name in self.external:
            raise ToolExecutionError(
                f"tool {name!r} belongs to an ExternalToolset, whose results come from outside "
                "the agent, so a Dex tool Step cannot run it"
            )
        return await super().call_tool(name, tool_args, ctx, tool)


@dataclass
class ApproveEveryTool(AbstractCapability[Any]):
    """Per-run capability: every tool needs approval, so only the approved call runs."""

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any]:
        return ApprovalRequiredToolset(_RunnableOnly(toolset))
