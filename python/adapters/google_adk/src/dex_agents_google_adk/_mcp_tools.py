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
from typing import TYPE_CHECKING, Any

from dex_agents.runner import McpSources
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool

__all__ = ["McpAdkTool", "McpTools"]


class McpAdkTool(BaseTool):
    """An MCP tool's declaration; only its source runs it (in a tool Step)."""

    def __init__(self, tool: McpTool) -> None:
        super().__init__(name=tool.name, description=tool.description or "")
        self._parameters = dict(tool.parameters)

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._parameters
        )

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        raise RuntimeError(f"MCP tool {self.name!r} runs through its McpToolSource only")


class McpTools(McpSources["McpTool"]):
    """The runner's MCP sources, with their tools as ADK tool declarations."""

    async def adk_tools(self, taken: Sequence[str]) -> list[BaseTool]:
        """Every source's tools (the sources cache their listings)."""
        return [McpAdkTool(tool) for tool in await self.list_tools(taken)]
