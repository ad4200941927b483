"""Server configurations: what a Worker is told about its MCP servers.

They come from the Worker's own configuration only. Nothing a session carries
(Flow input, a user message, settings) can name a server: the source calls only
the servers it was built with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

__all__ = [
    "DEFAULT_CALL_TIMEOUT_SECONDS",
    "DEFAULT_HANDSHAKE_TIMEOUT_SECONDS",
    "McpHttpServer",
    "McpServerConfig",
    "McpStdioServer",
    "check_server_name",
]

DEFAULT_HANDSHAKE_TIMEOUT_SECONDS = 30.0
"""Bounds opening a connection: spawn or connect, plus `server/discover` or `initialize`."""
DEFAULT_CALL_TIMEOUT_SECONDS = 300.0
"""Bounds one request once the connection is open; past it the call is interrupted."""

_SERVER_NAME = re.compile(r"^[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*$")


def check_server_name(name: str) -> None:
    """Server names prefix tool names as `<server>__<tool>`, split on the first `__`.

    Raises:
        ValueError: the name is empty, contains `__`, starts or ends with `_`, or
            has a character outside `[A-Za-z0-9._-]`.
    """
    if not _SERVER_NAME.match(name) or len(name) > 64:
        raise ValueError(
            f"MCP server name {name!r} must be 1 to 64 characters of [A-Za-z0-9._-], "
            "without `__` and without a leading or trailing `_`"
        )


@dataclass(frozen=True, kw_only=True)
class McpStdioServer:
    """An MCP server the Worker starts as a child process, one process per request."""

    name: str
    """Prefixes the server's tool names (`<name>__<tool>`)."""
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """The child's environment; None inherits only the MCP SDK's safe default variables."""
    cwd: str | None = None

    def __post_init__(self) -> None:
        check_server_name(self.name)
        object.__setattr__(self, "args", tuple(self.args))


@dataclass(frozen=True, kw_only=True)
class McpHttpServer:
    """A Streamable HTTP MCP server; every request is its own HTTP exchange."""

    name: str
    """Prefixes the server's tool names (`<name>__<tool>`)."""
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    """Sent with every request (for example an Authorization header)."""

    def __post_init__(self) -> None:
        check_server_name(self.name)


McpServerConfig: TypeAlias = McpStdioServer | McpHttpServer
