"""MCP servers' tools (`McpToolSource`) as LangChain tools of a `create_agent` agent.

`langchain_mcp_tools(source)` lists the source and returns one LangChain tool
per MCP tool, named `<server>__<tool>` with the server's input schema, to pass
to `create_agent` with the agent's own tools. Under `LangGraphRunner(...,
mcp_sources=[source])` the model's calls of them are deferred like every other
call, with the annotation effect (a `ToolPolicy` still wins) and the reference
the tool Step calls by; the tool Step hands the call to the source whole, so a
Streamable HTTP server's task is followed by PollToolTask Steps. The tools'
own bodies never run under the runner. `dex_agents.mcp` is only named here for
type checking, so importing the adapter never loads the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool, McpToolSource

__all__ = ["langchain_mcp_tools"]


def _langchain_tool(tool: McpTool) -> BaseTool:
    async def only_in_tool_steps(**_arguments: Any) -> str:
        raise RuntimeError(
            f"the MCP tool {tool.name!r} runs in a Dex tool Step through its McpToolSource: "
            "give the source to LangGraphRunner(..., mcp_sources=[source])"
        )

    return StructuredTool.from_function(
        coroutine=only_in_tool_steps,
        name=tool.name,
        description=tool.description or tool.name,
        args_schema=dict(tool.parameters),
    )


async def langchain_mcp_tools(
    source: McpToolSource, *, taken: Sequence[str] = ()
) -> list[BaseTool]:
    """Lists `source` (once; it caches) and returns its tools for `create_agent`.

    `taken` are the agent's own tool names: an MCP tool that collides is left out
    with a warning, as the source does for every runner.
    """
    return [_langchain_tool(tool) for tool in await source.list_tools(taken=taken)]
