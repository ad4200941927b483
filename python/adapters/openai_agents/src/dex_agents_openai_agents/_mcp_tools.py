"""MCP servers' tools (`McpToolSource`) as gated function tools of the starting agent.

Each tool the source lists becomes an SDK `FunctionTool` named `<server>__<tool>`
with the server's input schema. It is gated like every other function tool, so
a call ends the model Step as an interruption; the runner defers it with the
annotation effect (readOnlyHint read, idempotentHint idempotent_write; a
`ToolPolicy` still wins) and the reference its tool Step calls by, and the tool
Step hands the call to the source whole (`McpToolSource.execute_deferred_tool_call`),
so a Streamable HTTP server's task is followed by PollToolTask Steps. The
`dex_agents.mcp` types are only named here for type checking, so importing the
adapter never loads the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from dex_agents_openai_agents._context import stored_result

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool, McpToolSource

__all__ = ["McpTools"]


def _gated_mcp_tool(tool: McpTool) -> FunctionTool:
    async def return_stored(ctx: ToolContext[Any], _arguments: str) -> str:
        return stored_result(tool.name, ctx.tool_call_id)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=dict(tool.parameters),
        on_invoke_tool=return_stored,
        # The server validates the arguments against its own schema, which need not
        # meet the Responses API's strict-schema rules.
        strict_json_schema=False,
        needs_approval=True,
    )


class McpTools:
    """The runner's MCP sources: their listed tools, and which source owns a call."""

    def __init__(self, sources: Sequence[McpToolSource]) -> None:
        self.sources = list(sources)
        self._function_tools: list[FunctionTool] | None = None

    async def function_tools(self, taken: Sequence[str]) -> list[FunctionTool]:
        """Every source's tools, listed once (the sources cache their listings)."""
        if self._function_tools is None:
            tools: list[FunctionTool] = []
            names = list(taken)
            for source in self.sources:
                for tool in await source.list_tools(taken=names):
                    tools.append(_gated_mcp_tool(tool))
                    names.append(tool.name)
            self._function_tools = tools
        return list(self._function_tools)

    def listed(self, tool_name: str) -> McpTool | None:
        for source in self.sources:
            tool = source.tool(tool_name)
            if tool is not None:
                return tool
        return None

    def owner(self, tool_source_reference: str | None) -> McpToolSource | None:
        if not tool_source_reference:
            return None
        return next((s for s in self.sources if s.owns(tool_source_reference)), None)
