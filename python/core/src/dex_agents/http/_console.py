"""The web console (`dex-agents serve --console DIR`): its static files and the
read-only JSON it needs beyond the app's own routes.

The console chats through the app's UI stream and RPC routes; what it reads here is
what `dex-agents inspect` shows: the sessions of the app's Flow type (Dex
SearchFlows) and a session's Step timeline from its Flow history. Starting a session
is the one write, so a fresh console has something to talk to.
"""

from __future__ import annotations

import dataclasses
import re
import time
import uuid
from pathlib import Path

import grpc
from dex import FlowNotFoundError, FlowStatus
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from dex_agents.chat._errors import describe_error, is_connection_error
from dex_agents.chat._timeline import build_timeline
from dex_agents.errors import SessionAlreadyStartedError
from dex_agents.history import active_steps, fetch_history
from dex_agents.http._context import AppContext
from dex_agents.http._responses import BadRequest, error_response, json_response, read_json_object

__all__ = ["CONSOLE_PATH", "mount_console"]

CONSOLE_PATH = "/console"
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
_LIST_LIMIT = 200


def _iso(timestamp: object) -> str | None:
    seconds = float(timestamp.seconds) + float(timestamp.nanos) / 1e9  # type: ignore[attr-defined]
    if seconds <= 0:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _status_name(status: int) -> str:
    return str(pb.FlowStatus.Name(status)).removeprefix("FLOW_STATUS_").lower()


class ConsoleRoutes:
    """GET/POST /console/api/sessions and GET /console/api/sessions/{id}/timeline."""

    def __init__(self, ctx: AppContext, dex_address: str) -> None:
        self.ctx = ctx
        self.address = dex_address

    def _unreachable(self, error: BaseException) -> Response:
        return error_response(describe_error(error, address=self.address), 502)

    async def sessions(self, request: Request) -> Response:
        """The newest sessions of the app's Flow type first."""
        flow_type = self.ctx.client.flow.get_flow_type()

        def search() -> list[dict[str, object]]:
            with grpc.insecure_channel(self.address) as channel:
                stub = dex_pb2_grpc.FlowServiceStub(channel)
                response = stub.SearchFlows(
                    pb.SearchFlowsRequest(query=f"FlowType = '{flow_type}'", page_size=_LIST_LIMIT),
                    timeout=10,
                )
            return [
                {
                    "session_id": run.flow_id,
                    "status": _status_name(run.flow_status),
                    "started_at": _iso(run.start_time),
                    "closed_at": _iso(run.close_time),
                }
                for run in response.flow_runs
            ]

        try:
            found = await self.ctx.blocking(search)
        except grpc.RpcError as error:
            return self._unreachable(error)
        return json_response({"flow_type": flow_type, "sessions": found})

    async def start(self, request: Request) -> Response:
        """Starts a session (idle, no first message); body `{"session_id"}` or empty."""
        session_id = f"console-{uuid.uuid4().hex[:12]}"
        if await request.body():
            try:
                body = await read_json_object(request)
            except BadRequest as refused:
                return error_response(str(refused), refused.status)
            given = body.get("session_id", session_id)
            if not isinstance(given, str) or not _SESSION_ID.match(given):
                return error_response(
                    f"'session_id' must be 1-128 letters, digits or . _ : -, got {given!r}", 400
                )
            session_id = given
        try:
            await self.ctx.blocking(lambda: self.ctx.client.start_session(session_id))
        except SessionAlreadyStartedError:
            return error_response(f"session {session_id!r} already exists", 409)
        except Exception as error:
            if is_connection_error(error):
                return self._unreachable(error)
            return error_response(describe_error(error), 409)
        return json_response({"session_id": session_id}, status=201)

    async def timeline(self, request: Request) -> Response:
        """The session's status and the Step timeline `dex-agents inspect` prints."""
        session_id = request.path_params["session_id"]

        def read() -> dict[str, object]:
            info = self.ctx.client.client.describe_flow(session_id)
            running = info.status is FlowStatus.RUNNING
            history = fetch_history(self.address, session_id, info.run_id)
            active = active_steps(self.address, session_id, info.run_id) if running else []
            entries = build_timeline(history, active, now_seconds=time.time())
            return {
                "session_id": session_id,
                "flow_type": info.flow_type,
                "run_id": info.run_id,
                "status": info.status.value,
                "running": running,
                "entries": [dataclasses.asdict(entry) for entry in entries],
            }

        try:
            return json_response(await self.ctx.blocking(read))
        except FlowNotFoundError:
            return error_response(f"no session {session_id!r} on the Dex server", 404)
        except Exception as error:
            if is_connection_error(error):
                return self._unreachable(error)
            raise


def mount_console(app: Starlette, *, static_dir: Path, dex_address: str) -> None:
    """Adds the console to an app from `create_app`: `/console/` and `/console/api/...`."""
    index = static_dir / "index.html"
    if not index.is_file():
        raise ValueError(f"--console {static_dir} has no index.html (build //typescript/console)")
    ctx: AppContext = app.state.dex_agents
    routes = ConsoleRoutes(ctx, dex_address)

    async def home(request: Request) -> Response:
        return RedirectResponse(f"{CONSOLE_PATH}/", status_code=307)

    app.router.routes.extend(
        [
            Route("/", home, methods=["GET"]),
            Route(f"{CONSOLE_PATH}/api/sessions", routes.sessions, methods=["GET"]),
            Route(f"{CONSOLE_PATH}/api/sessions", routes.start, methods=["POST"]),
            Route(
                f"{CONSOLE_PATH}/api/sessions/{{session_id}}/timeline",
                routes.timeline,
                methods=["GET"],
            ),
            # Bazel's outputs and runfiles are symlinks into the output base.
            Mount(
                CONSOLE_PATH,
                StaticFiles(directory=static_dir, html=True, follow_symlink=True),
            ),
        ]
    )
