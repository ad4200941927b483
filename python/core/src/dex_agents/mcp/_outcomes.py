"""What a failed MCP request means for the call: the model sees it, or the tool may have run.

The rule (the core README's MCP section): a tool's own failure and a call that
never left the Worker are `ToolExecutionError`s the model sees; a request that
went out without a result coming back is `McpToolCallInterruptedError`, which
fails the Step attempt so the call's effect decides what follows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import anyio
import httpx2
from mcp import types
from mcp.shared.exceptions import MCPError

from dex_agents._runner.values import ToolExecutionError
from dex_agents.mcp._errors import McpToolCallInterruptedError

__all__ = ["flatten", "interrupted_or_failed", "not_sent", "result_text"]

# JSON-RPC codes that do not prove the server refused the call: the SDK maps an
# HTTP error status to -32603 and an unreadable body to -32700, and a gateway
# can send either after the server ran the call. -32600 is what the SDK makes
# locally of a wrong Content-Type or a 202 to a request; -32001 its own timeout.
_NO_RESULT_CODES = frozenset({-32603, -32700, -32600, -32001})
# The SDK's own reports of a connection that ended before the response (the
# code is one servers may also send, so the message decides).
_CLOSED_MESSAGES = ("Connection closed", "SSE stream ended without a response")
_NOT_SENT_ERRORS: tuple[type[BaseException], ...] = (httpx2.ConnectError, httpx2.ConnectTimeout)


def flatten(error: BaseException) -> Iterator[BaseException]:
    """The leaves of an exception group (the MCP client raises groups from its task group)."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from flatten(inner)
    else:
        yield error


def not_sent(server: str, tool: str, error: BaseException) -> ToolExecutionError:
    """The call never left the Worker: the tool did not run, and the model may try again."""
    return ToolExecutionError(
        f"MCP server {server!r} could not be reached, so {tool!r} was not called: "
        f"{_describe(error)}"
    )


def interrupted_or_failed(
    server: str, tool: str, error: BaseException
) -> ToolExecutionError | McpToolCallInterruptedError:
    """Classifies an error raised while `tools/call` (or a task request) was in flight."""
    leaves = list(flatten(error))
    if any(isinstance(leaf, _NOT_SENT_ERRORS) for leaf in leaves):
        return not_sent(server, tool, error)
    for leaf in leaves:
        if isinstance(leaf, MCPError):
            if leaf.code in _NO_RESULT_CODES or (
                leaf.code == -32000 and leaf.message.startswith(_CLOSED_MESSAGES)
            ):
                return McpToolCallInterruptedError(server, tool, _describe(leaf))
            return ToolExecutionError(
                f"MCP server {server!r} refused {tool!r} (JSON-RPC {leaf.code}): {leaf.message}"
            )
    if any(isinstance(leaf, TimeoutError) for leaf in leaves):
        return McpToolCallInterruptedError(server, tool, "no result before the call timeout")
    return McpToolCallInterruptedError(server, tool, _describe(error))


def result_text(result: types.CallToolResult) -> str:
    """The model-facing text of a result: its text blocks, else its structured content."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, separators=(",", ":"))
    return ""


def _describe(error: BaseException) -> str:
    leaves = list(flatten(error))
    first = leaves[0] if leaves else error
    if isinstance(first, MCPError):
        return f"JSON-RPC {first.code}: {first.message}"
    if isinstance(first, anyio.EndOfStream | anyio.BrokenResourceError | anyio.ClosedResourceError):
        return f"connection closed ({type(first).__name__})"
    text = str(first)
    return f"{type(first).__name__}: {text}" if text else type(first).__name__
