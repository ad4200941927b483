"""The MCP server of `mcp_example.py`: a notes service over stdio or Streamable HTTP.

python mcp_notes_server.py stdio
python mcp_notes_server.py http 8123
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES = {"dex": "Dex runs every Step durably."}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def find_note(topic: str) -> str:
    """Finds the note about a topic (a read: retried freely)."""
    return NOTES.get(topic, f"no note about {topic}")


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def save_note(title: str, ctx: Context) -> str:
    """Saves a note (an idempotent write: a retry sends the same idempotency key)."""
    meta = ctx.request_context.meta
    key = meta.get("io.superdurable.dex/idempotencyKey") if isinstance(meta, dict) else None
    return f"saved {title!r} once for key {key}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        import uvicorn

        app = server.streamable_http_app(stateless_http=True, json_response=True)
        uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        server.run("stdio")
