"""MCP test support: real MCP servers as child processes, and their call logs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dex_agents.mcp import McpHttpServer, McpStdioServer
from dex_agents_testing import free_port, wait_until
from dexlite.testing import ChildProcess, accepts_connections, child_env

__all__ = [
    "FAULTS_SCRIPT",
    "SERVERS_SCRIPT",
    "HttpServerProcess",
    "calls",
    "http_server",
    "stdio_server",
]

SERVERS_SCRIPT = str(Path(__file__).resolve().parent / "servers.py")
FAULTS_SCRIPT = str(Path(__file__).resolve().parent / "faults.py")


def stdio_server(name: str, log: Path, variant: str = "basic") -> McpStdioServer:
    """A stdio server configuration: each request starts `servers.py` afresh."""
    return McpStdioServer(
        name=name,
        command=sys.executable,
        args=(SERVERS_SCRIPT, "--variant", variant, "--log", str(log), "stdio"),
        env=child_env(),
    )


def calls(log: Path, tool: str | None = None) -> list[dict[str, Any]]:
    """The calls a server logged (all, or of one tool)."""
    if not log.exists():
        return []
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [e for e in entries if tool is None or e["tool"] == tool]


class HttpServerProcess(ChildProcess):
    """A Streamable HTTP server (`servers.py` or `faults.py`) on a loopback port."""

    def __init__(self, script: str, log: Path, variant: str = "basic", port: int | None = None):
        self.script, self.log, self.variant = script, log, variant
        self.port = port or free_port()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def config(self, name: str) -> McpHttpServer:
        return McpHttpServer(name=name, url=self.url)

    def start(self) -> HttpServerProcess:
        args = [sys.executable, self.script, "--variant", self.variant, "--log", str(self.log)]
        self.proc = subprocess.Popen(
            [*args, "http", "--port", str(self.port)],
            env=child_env(),
            start_new_session=True,
        )
        wait_until(
            lambda: accepts_connections(self.port),
            timeout=60,
            what=f"the MCP HTTP server on port {self.port}",
        )
        return self


@contextmanager
def http_server(script: str, log: Path, variant: str = "basic") -> Iterator[HttpServerProcess]:
    server = HttpServerProcess(script, log, variant).start()
    try:
        yield server
    finally:
        server.kill()
