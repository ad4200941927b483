"""Listing each server's tools as agent tool definitions named `<server>__<tool>`."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import anyio
from dex_agents_contracts import ToolEffect
from mcp import types
from mcp.client.session import ClientSession

from dex_agents._runner.policies import tool_effect_from_annotations
from dex_agents.mcp._config import McpServerConfig
from dex_agents.mcp._connection import Connector
from dex_agents.mcp._naming import MAX_TOOL_NAME_LENGTH, ToolReference, qualified_name
from dex_agents.mcp._outcomes import flatten

__all__ = ["McpTool", "list_server_tools", "merge_listings"]

_logger = logging.getLogger("dex_agents.mcp")
_MAX_PAGES = 100


@dataclass(frozen=True, kw_only=True)
class McpTool:
    """One MCP tool as the agent sees it."""

    name: str
    """`<server>__<tool>`, the name the model calls."""
    server: str
    mcp_name: str
    """The tool's name on its server."""
    description: str
    parameters: Mapping[str, object]
    """The tool's input JSON Schema."""
    annotations: Mapping[str, object] = field(default_factory=dict)
    """The wire annotations (`readOnlyHint`, `idempotentHint`, ...)."""
    effect: ToolEffect | None = None
    """What the annotations imply (None when they say nothing or are not trusted)."""

    @property
    def reference(self) -> str:
        """The `tool_source_reference` a tool Step calls the tool by, without a listing."""
        return ToolReference(server=self.server, tool=self.mcp_name).encode()


async def list_server_tools(
    connector: Connector,
    server: McpServerConfig,
    *,
    list_timeout: float,
    trust_annotations: bool,
) -> list[McpTool] | None:
    """The server's tools, or None (with a warning) when it cannot be listed."""

    async def list_all(session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        with anyio.fail_after(list_timeout):
            for _ in range(_MAX_PAGES):
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        return tools

    exchange = await connector.exchange(server, list_all)
    if exchange.value is None:
        leaves = flatten(exchange.error) if exchange.error is not None else iter(())
        detail = "; ".join(str(leaf) or type(leaf).__name__ for leaf in leaves)
        _logger.warning(
            "MCP server %r could not be listed, so its tools are left out: %s", server.name, detail
        )
        return None
    listed: list[McpTool] = []
    for tool in exchange.value:
        name = qualified_name(server.name, tool.name)
        if name is None:
            _logger.warning(
                "MCP tool %r of server %r is left out: the name must match [A-Za-z0-9._-] and "
                "`<server>__<tool>` stay within %d characters",
                tool.name,
                server.name,
                MAX_TOOL_NAME_LENGTH,
            )
            continue
        annotations = (
            tool.annotations.model_dump(by_alias=True, exclude_none=True)
            if tool.annotations is not None
            else {}
        )
        listed.append(
            McpTool(
                name=name,
                server=server.name,
                mcp_name=tool.name,
                description=tool.description or "",
                parameters=dict(tool.input_schema),
                annotations=annotations,
                effect=tool_effect_from_annotations(annotations) if trust_annotations else None,
            )
        )
    return listed


def merge_listings(
    listings: Sequence[list[McpTool] | None], *, taken: Sequence[str] = ()
) -> list[McpTool]:
    """Every listed tool once: a name already taken (by `taken` or an earlier tool) is
    left out with a warning."""
    seen = set(taken)
    merged: list[McpTool] = []
    for listing in listings:
        for tool in listing or ():
            if tool.name in seen:
                _logger.warning(
                    "MCP tool %r of server %r is left out: an earlier tool has that name",
                    tool.mcp_name,
                    tool.server,
                )
                continue
            seen.add(tool.name)
            merged.append(tool)
    return merged
