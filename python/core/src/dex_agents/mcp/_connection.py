"""One connection per request, with the server's protocol era remembered per Worker.

Every request opens a new connection, so a server restarted between listing and
calling is harmless and no session state spans Steps. Opening is bounded by the
handshake timeout. The first connection to a server probes its era
(`server/discover`, falling back to `initialize`); later ones connect pinned to
it, because probing a legacy stdio server costs the SDK's 10 s discover timeout
every time. HTTP requests share one `httpx2.AsyncClient` per event loop and
header set, which keeps a call's connection cost in milliseconds.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import anyio
import httpx2
from mcp import Client, StdioServerParameters, types
from mcp.client import Transport
from mcp.client.extension import ClientExtension
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from dex_agents.mcp._config import McpHttpServer, McpServerConfig, McpStdioServer

__all__ = ["Connector", "Exchange"]

_logger = logging.getLogger(__name__)
T = TypeVar("T")

# The MCP transports' own defaults: 30 s to connect, write and take a pooled
# connection, 300 s to read (the call timeout bounds a request separately).
_HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


@dataclass(frozen=True)
class _Era:
    mode: str
    discover: types.DiscoverResult | None


@dataclass(frozen=True, kw_only=True)
class Exchange(Generic[T]):
    """How one request went: its value, or the error and whether it was in flight."""

    value: T | None = None
    error: BaseException | None = None
    phase: Literal["connect", "request", "done"] = "done"
    """`connect`: the request never left the Worker; `request`: it was in flight."""


class Connector:
    """Opens the connections of one `McpToolSource`; see the module docstring."""

    def __init__(self, *, handshake_timeout: float) -> None:
        self.handshake_timeout = handshake_timeout
        self._eras: dict[str, _Era] = {}
        self._http: dict[tuple[int, tuple[tuple[str, str], ...]], httpx2.AsyncClient] = {}
        self._http_loop: asyncio.AbstractEventLoop | None = None

    async def exchange(
        self,
        server: McpServerConfig,
        action: Callable[[ClientSession], Awaitable[T]],
        *,
        extensions: Sequence[ClientExtension] = (),
    ) -> Exchange[T]:
        """Runs `action` on a new connection to `server`; never raises an `Exception`."""
        era = self._eras.get(server.name)
        mode, prior = (era.mode, era.discover) if era is not None else ("auto", None)
        phase: Literal["connect", "request", "done"] = "connect"
        result: list[T] = []
        failure: list[BaseException] = []
        try:
            # The bound sits outside the client's own task group, so the client exits
            # inside it (mcp 2.3.0 refuses a scope exited around an entered client).
            with anyio.fail_after(self.handshake_timeout) as scope:
                async with Client(
                    self._target(server),
                    mode=mode,
                    prior_discover=prior,
                    cache=None,
                    extensions=list(extensions) or None,
                ) as client:
                    scope.deadline = math.inf
                    if era is None:
                        self._remember(server, client.session)
                    phase = "request"
                    try:
                        result.append(await action(client.session))
                    except Exception as error:  # settled outside, after a clean exit
                        failure.append(error)
                    phase = "done"
        except Exception as raised:
            if result:  # the answer arrived; only closing the connection failed
                _logger.debug("closing the MCP connection to %r failed", server.name, exc_info=True)
            elif not failure:
                failure.append(raised)
        if phase == "connect":
            # A pinned era may be stale (the server was replaced): probe again next time.
            self._eras.pop(server.name, None)
        if result:
            return Exchange(value=result[0])
        problem = (
            failure[0] if failure else RuntimeError("the MCP connection ended without a result")
        )
        if phase == "done":
            phase = "request"
        return Exchange(error=problem, phase=phase)

    def forget_era(self, server: str) -> None:
        self._eras.pop(server, None)

    async def aclose(self) -> None:
        """Closes the shared HTTP clients."""
        clients, self._http = list(self._http.values()), {}
        for client in clients:
            await client.aclose()

    def _remember(self, server: McpServerConfig, session: ClientSession) -> None:
        version = session.protocol_version
        if version in MODERN_PROTOCOL_VERSIONS:
            self._eras[server.name] = _Era(mode=version, discover=session.discover_result)
        else:
            self._eras[server.name] = _Era(mode="legacy", discover=None)

    def _target(self, server: McpServerConfig) -> StdioServerParameters | Transport:
        if isinstance(server, McpStdioServer):
            return StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=dict(server.env) if server.env is not None else None,
                cwd=server.cwd,
            )
        assert isinstance(server, McpHttpServer)
        return streamable_http_client(server.url, http_client=self._http_client(server))

    def _http_client(self, server: McpHttpServer) -> httpx2.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._http_loop is not loop:
            # A client is bound to the loop it was made in (a Worker has one loop;
            # a test that runs several drops the old clients unclosed).
            self._http, self._http_loop = {}, loop
        key = (id(loop), tuple(sorted(server.headers.items())))
        client = self._http.get(key)
        if client is None:
            client = httpx2.AsyncClient(timeout=_HTTP_TIMEOUT, headers=dict(server.headers))
            self._http[key] = client
        return client
