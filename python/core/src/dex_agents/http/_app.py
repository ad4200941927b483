"""`create_app`: the ASGI application over one AgentSessionClient."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Route

from dex_agents.client import AgentSessionClient
from dex_agents.http._context import AppContext
from dex_agents.http._event_routes import EventRoutes
from dex_agents.http._limits import HttpLimits
from dex_agents.http._rpc_routes import rpc_routes
from dex_agents.http._ui_routes import UiRoutes

__all__ = ["create_app"]


def create_app(client: AgentSessionClient, *, limits: HttpLimits | None = None) -> Starlette:
    """Routes for UIs of `client`'s sessions (python/core/README.md, "HTTP app").

    The app borrows the client: closing the app leaves it open.
    """
    ctx = AppContext(client, limits or HttpLimits())
    events = EventRoutes(ctx)
    ui = UiRoutes(ctx)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            ctx.close()

    routes = [
        Route("/sessions/{session_id}/snapshot", events.snapshot, methods=["GET"]),
        Route("/sessions/{session_id}/events", events.events, methods=["GET"]),
        Route("/sessions/{session_id}/ui-stream", ui.stream, methods=["GET"]),
        Route("/sessions/{session_id}/ui-stream", ui.submit, methods=["POST"]),
        *rpc_routes(ctx),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.dex_agents = ctx
    return app
