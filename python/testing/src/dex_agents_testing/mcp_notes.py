"""A real MCP notes server on stdio for the adapters' MCP tests, and its McpToolSource.

`notes_source(log)` starts this module as the server child (`python -m
dex_agents_testing.mcp_notes LOG TOOL...`). Each call appends one JSON line to LOG
(the tool, the Dex idempotency key from the request's `_meta`, the arguments), so a
test counts runs and keys across the process boundary. Only the named tools are
served, so a test sees exactly the listing it asserts. The tools' annotations cover
the three effects an adapter maps: read_note is read-only, save_note idempotent,
add_note carries none.

Import this module only where the MCP SDK is installed; the rest of the testing
package never loads it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dex_agents.mcp import McpStdioServer, McpToolSource
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

__all__ = ["IDEMPOTENCY_KEY_META", "NOTE_TOOLS", "logged_calls", "notes_source"]

# Spelled out, not taken from dex_agents.mcp: the server checks the wire key on its own.
IDEMPOTENCY_KEY_META = "io.superdurable.dex/idempotencyKey"
NOTE_TOOLS = ("read_note", "save_note", "add_note")


def notes_source(
    log: Path, tools: Sequence[str] = ("read_note",), *, name: str = "notes"
) -> McpToolSource:
    """An McpToolSource over one notes server child serving `tools`, logging to `log`."""
    unknown = sorted(set(tools) - set(NOTE_TOOLS))
    if unknown:
        raise ValueError(f"the notes server has no tools {unknown}; it serves {NOTE_TOOLS}")
    # The child imports `mcp` and this package from wherever this interpreter does.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    server = McpStdioServer(
        name=name,
        command=sys.executable,
        args=("-m", __name__, str(log), *tools),
        env=env,
    )
    return McpToolSource([server])


def logged_calls(log: Path) -> list[dict[str, Any]]:
    """The server's calls so far, oldest first ([] before the first call)."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _serve(log: str, tools: Sequence[str]) -> None:
    server = MCPServer("notes")

    def record(tool: str, ctx: Context, **arguments: Any) -> None:
        meta = ctx.request_context.meta or {}
        entry = {"tool": tool, "key": meta.get(IDEMPOTENCY_KEY_META), "arguments": arguments}
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")

    if "read_note" in tools:

        @server.tool(annotations=ToolAnnotations(read_only_hint=True))
        async def read_note(title: str, ctx: Context) -> str:
            """Reads a note."""
            record("read_note", ctx, title=title)
            return f"note {title}: buy milk"

    if "save_note" in tools:

        @server.tool(annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=True))
        async def save_note(title: str, ctx: Context) -> str:
            """Saves a note."""
            record("save_note", ctx, title=title)
            return "saved"

    if "add_note" in tools:

        @server.tool()
        async def add_note(title: str, ctx: Context) -> str:
            """Adds a note."""
            record("add_note", ctx, title=title)
            return f"added {title}"

    server.run("stdio")


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2:])
