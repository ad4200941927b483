"""MCP tools as Stepwise `Tool`s whose function is one `call_tool` in the tool Step."""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Protocol

from dex_agents._runner.policies import ToolPolicy
from dex_agents.mcp._listing import McpTool
from dex_agents.mcp._naming import ToolReference
from dex_agents.stepwise._tools import Tool, ToolContext

__all__ = ["CallTool", "stepwise_tool", "stepwise_tool_for_reference"]


class CallTool(Protocol):
    """`McpToolSource.call_tool`, passed in so this module does not import the source."""

    async def __call__(
        self,
        tool_name: str,
        arguments: Mapping[str, object] | str,
        *,
        idempotency_key: str,
        tool_source_reference: str | None = None,
    ) -> str: ...


def stepwise_tool(call_tool: CallTool, tool: McpTool) -> Tool:
    """A Stepwise tool for a listed MCP tool; its effect is the annotations' effect."""
    return _make(
        call_tool,
        name=tool.name,
        reference=tool.reference,
        description=tool.description,
        parameters=dict(tool.parameters),
        policy=ToolPolicy(effect=tool.effect) if tool.effect is not None else None,
    )


def stepwise_tool_for_reference(
    call_tool: CallTool, servers: Container[str], name: str, reference: str
) -> Tool | None:
    """The tool a call record names, rebuilt from its reference without a listing.

    Only a server of this source's configuration qualifies: a reference to any
    other server is not this source's tool.
    """
    decoded = ToolReference.decode(reference)
    if decoded is None or decoded.server not in servers:
        return None
    return _make(
        call_tool,
        name=name,
        reference=reference,
        description="",
        parameters={"type": "object"},
        policy=None,
    )


def _make(
    call_tool: CallTool,
    *,
    name: str,
    reference: str,
    description: str,
    parameters: dict[str, object],
    policy: ToolPolicy | None,
) -> Tool:
    async def call(_dex_tool_context: ToolContext, **arguments: object) -> str:
        return await call_tool(
            name,
            arguments,
            idempotency_key=_dex_tool_context.idempotency_key,
            tool_source_reference=_dex_tool_context.tool_source_reference or reference,
        )

    return Tool(
        call,
        name=name,
        description=description,
        policy=policy,
        parameters=parameters,
        source_reference=reference,
    )
