"""MCP servers' tools (`McpToolSource`) as tools of the root agent.

Each tool the source lists becomes an ADK tool named `<server>__<tool>` whose
declaration carries the server's input schema; the runner defers it like every
other tool, with the annotation effect (readOnlyHint read, idempotentHint
idempotent_write; a `ToolPolicy` still wins) and the reference its tool Step
calls by, and the tool Step hands the call to the source whole
(`McpToolSource.execute_deferred_tool_call`). The `dex_agents.mcp` types are
only named here for type checking, so importing the adapter never loads the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dex_agents.runner import McpSources
from google.adk.tools.base_tool import BaseTool

from dex_agents_google_adk._gating import DeclaredTool

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool

__all__ = ["McpTools"]


class McpTools(McpSources["McpTool"]):
    """The runner's MCP sources, with their tools as ADK tool declarations."""

    async def adk_tools(self, taken: Sequence[str]) -> list[BaseTool]:
        """Every source's tools (the sources cache their listings)."""
        return [_declared(tool) for tool in await self.list_tools(taken)]


def _declared(tool: McpTool) -> BaseTool:
    return DeclaredTool(tool.name, tool.description or "", tool.parameters)
