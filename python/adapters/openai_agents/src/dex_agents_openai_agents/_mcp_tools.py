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
from dex_agents._runner.call_results import stored_result
from dex_agents.runner import McpSources

from dex_agents_openai_agents._gating import hidden_while_planning

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool, McpToolSource

__all__ = ["McpTools"]


def _gated_mcp_tool(tool: McpTool) -> FunctionTool:
    async def return_stored(ctx: ToolContext[Any], _arguments: str) -> str:
        return stored_result(tool.name, ctx.tool_call_id)

    gated = FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=dict(tool.parameters),
        on_invoke_tool=return_stored,
        # The server validates the arguments against its own schema, which need not
        # meet the Responses API's strict-schema rules.
        strict_json_schema=False,
        needs_approval=True,
    )
    return hidden_while_planning(gated)


class McpTools(McpSources["McpTool"]):
    """The runner's MCP sources, with their tools as gated function tools."""

    def __init__(self, sources: Sequence[McpToolSource]) -> None:
        super().__init__(sources)
        self._function_tools: list[FunctionTool] | None = None

    async def function_tools(self, taken: Sequence[str]) -> list[FunctionTool]:
        """Every source's tools, converted once (the sources cache their listings)."""
        if self._function_tools is None:
            self._function_tools = [_gated_mcp_tool(t) for t in await self.list_tools(taken)]
        return list(self._function_tools)
