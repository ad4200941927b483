"""Real MCP servers for the tests, run as child processes (stdio or Streamable HTTP).

`python servers.py --variant basic --log calls.jsonl stdio`
`python servers.py --variant basic --log calls.jsonl http --port 8123`

Every tool call appends one JSON line to `--log` (tool, arguments, the
idempotency key from `_meta`, the server's pid) before it does anything else,
so a test can see that a request reached the server and how often.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

from dex_agents_testing.mcp_jobs import build_tasks_server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations

IDEMPOTENCY_KEY = "io.superdurable.dex/idempotencyKey"


def _log(path: Path, tool: str, arguments: dict[str, Any], ctx: Context) -> int:
    """Appends the call; returns how many calls of `tool` with this key the log holds."""
    meta = ctx.request_context.meta
    key = meta.get(IDEMPOTENCY_KEY) if isinstance(meta, dict) else None
    line = {"tool": tool, "arguments": arguments, "key": key, "pid": os.getpid()}
    with path.open("a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")
    same = 0
    for text in path.read_text(encoding="utf-8").splitlines():
        entry = json.loads(text)
        if entry["tool"] == tool and entry["key"] == key:
            same += 1
    return same


async def _wait_for(gate: Path, seconds: float) -> None:
    """Blocks the call until the test creates `gate` (or gives up)."""
    deadline = time.monotonic() + seconds
    while not gate.exists() and time.monotonic() < deadline:  # noqa: ASYNC110, ASYNC240 - a file gate the test opens
        await asyncio.sleep(0.05)


def build(variant: str, log: Path) -> MCPServer:
    if variant == "tasks":
        return build_tasks_server(log)
    server = MCPServer(f"test-{variant}")
    read = ToolAnnotations(read_only_hint=True)
    idempotent = ToolAnnotations(idempotent_hint=True, destructive_hint=True)

    if variant in ("basic", "alt"):

        @server.tool(annotations=read)
        async def lookup(city: str, ctx: Context) -> str:
            """Looks up the weather of a city."""
            _log(log, "lookup", {"city": city}, ctx)
            return f"{variant}: sunny in {city}"

    if variant == "basic":

        @server.tool(annotations=idempotent)
        async def set_flag(name: str, ctx: Context) -> str:
            """Sets a flag; the first call per idempotency key blocks until the gate opens."""
            calls = _log(log, "set_flag", {"name": name}, ctx)
            if calls == 1:
                await _wait_for(log.with_suffix(".gate"), 60)
            return f"flag {name} set"

        @server.tool()
        async def send_email(to: str, ctx: Context) -> str:
            """Sends an email (no annotations: not idempotent); blocks until the gate opens."""
            _log(log, "send_email", {"to": to}, ctx)
            await _wait_for(log.with_suffix(".gate"), 60)
            return f"sent to {to}"

        @server.tool(annotations=read)
        async def broken(ctx: Context) -> str:
            """Always fails as a tool error (isError)."""
            _log(log, "broken", {}, ctx)
            raise ToolError("the tool broke")

        @server.tool(annotations=read)
        async def refuse(code: int, ctx: Context) -> str:
            """Answers with a JSON-RPC error of `code`."""
            _log(log, "refuse", {"code": code}, ctx)
            raise MCPError(code, f"refused with {code}")

        @server.tool(annotations=read)
        async def hang(ctx: Context) -> str:
            """Never answers within a test's patience."""
            _log(log, "hang", {}, ctx)
            await asyncio.sleep(120)
            return "late"

        @server.tool(annotations=read)
        async def die(ctx: Context) -> str:
            """Kills the server process mid-call."""
            _log(log, "die", {}, ctx)
            os._exit(3)

        @server.tool(annotations=read)
        async def headered(ctx: Context) -> str:
            """Answers its first call per key -32020, as a server missing Mcp-Param-* would."""
            if _log(log, "headered", {}, ctx) == 1:
                raise MCPError(-32020, "HeaderMismatch: Mcp-Param-Region missing")
            return "headers fine"

        @server.tool(name="odd__name", annotations=read)
        async def odd(ctx: Context) -> str:
            """A tool whose own name has `__` in it."""
            _log(log, "odd__name", {}, ctx)
            return "odd"

    if variant == "alt":

        @server.tool(annotations=idempotent)
        async def set_flag(name: str, ctx: Context) -> str:
            """Collides with nothing: the server prefix keeps names apart."""
            _log(log, "set_flag", {"name": name}, ctx)
            return f"alt flag {name}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", default="basic")
    parser.add_argument("--log", required=True)
    sub = parser.add_subparsers(dest="transport", required=True)
    sub.add_parser("stdio")
    http = sub.add_parser("http")
    http.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = build(args.variant, Path(args.log))
    if args.transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
