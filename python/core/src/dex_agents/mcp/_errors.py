"""The error of a call that was sent without a result coming back."""

from __future__ import annotations

from dex_agents.errors import AgentSessionError

__all__ = ["McpToolCallInterruptedError"]


class McpToolCallInterruptedError(AgentSessionError):
    """A `tools/call` went out and no result came back, so the tool may have run.

    It is deliberately not a `ToolExecutionError`: it fails the tool Step
    attempt, and the call's effect decides what follows (CallTool sends a new
    request for read and idempotent_write calls, CallSingleAttemptTool records
    outcome_unknown).

    Attributes:
        server: The configured server name.
        tool: The tool's MCP name.
        reason: What happened (timeout, connection closed, an error status...).
    """

    def __init__(self, server: str, tool: str, reason: str) -> None:
        super().__init__(
            f"MCP call of {tool!r} on server {server!r} was sent but got no result: {reason}"
        )
        self.server = server
        self.tool = tool
        self.reason = reason

    def __reduce__(self) -> tuple[type[McpToolCallInterruptedError], tuple[str, str, str]]:
        return (type(self), (self.server, self.tool, self.reason))
