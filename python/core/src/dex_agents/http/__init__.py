"""HTTP endpoints for UIs (the `dex-agents[http]` extra): SSE, the AI SDK stream, RPCs.

`create_app(client)` is a Starlette application over an AgentSessionClient: plain
Server-Sent Events of a session's AgentEvents whose ids are Dex resume tokens, a
snapshot with the token to open them from, the AI SDK UI message stream of one
turn, and POST endpoints for the RPCs a UI calls; `mount_console` adds the web
console (typescript/console). Importing this package needs
starlette, sse-starlette and (for `dex-agents serve`) uvicorn; the rest of
dex_agents never imports it.
"""

from __future__ import annotations

from dex_agents.http._app import create_app
from dex_agents.http._console import mount_console
from dex_agents.http._limits import HttpLimits
from dex_agents.http._snapshot import ui_snapshot_json
from dex_agents.http._ui_token import UiToken
from dex_agents.http._ui_translate import ToolFacts, UiTurnTranslator

__all__ = [
    "HttpLimits",
    "ToolFacts",
    "UiToken",
    "UiTurnTranslator",
    "create_app",
    "mount_console",
    "ui_snapshot_json",
]
