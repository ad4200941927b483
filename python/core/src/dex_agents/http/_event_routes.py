"""The snapshot and the plain SSE of a session's AgentEvents, resumable by Last-Event-ID."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from datetime import timedelta

from dex import LongPollTimeoutError, StreamMessage
from dex_agents_contracts import AgentEvent, encode_agent_event
from sse_starlette import ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from dex_agents.http._bridge import Emit, StreamIdle, bridged
from dex_agents.http._context import AppContext
from dex_agents.http._cursor import EventCursor
from dex_agents.http._responses import BadRequest, dex_error, error_response, json_response
from dex_agents.http._snapshot import ui_snapshot_json
from dex_agents.http._sse import sse_response
from dex_agents.http._steering import steered_turns

__all__ = ["EventRoutes", "requested_token", "streams_full"]

# The shortest Dex long poll (whole seconds; 0 would mean the server's longest).
_PROBE = timedelta(seconds=1)


def requested_token(request: Request) -> str:
    """Where to resume: Last-Event-ID (an EventSource reconnecting), else `?after=`."""
    header = request.headers.get("last-event-id")
    if header:
        return header
    return request.query_params.get("after", "")


def streams_full(ctx: AppContext) -> Response:
    return error_response(
        f"too many open streams (the limit is {ctx.limits.max_streams}); retry later",
        503,
        headers={"Retry-After": "1"},
    )


class EventRoutes:
    """GET /sessions/{id}/snapshot and GET /sessions/{id}/events."""

    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx

    async def snapshot(self, request: Request) -> Response:
        """The snapshot plus the token to open the events from.

        The token is the newest event's, read before the snapshot, so events the
        snapshot already shows may arrive again but none it lacks are skipped.
        `steered_turns` names the turns steering started (among the newest events).
        """
        session_id = request.path_params["session_id"]
        client = self.ctx.client

        def read() -> tuple[str, dict[str, object], list[str]]:
            page = client.client.list_stream_messages(session_id, client.flow.events, 1)
            token = page.messages[0].resume_token if page.messages else ""
            snapshot = ui_snapshot_json(client.get_snapshot(session_id))
            return token, snapshot, steered_turns(client, session_id)

        try:
            token, snapshot, steered = await self.ctx.blocking(read)
        except Exception as error:
            refused = dex_error(error)
            if refused is None:
                raise
            return error_response(str(refused), refused.status)
        return json_response(
            {"snapshot": snapshot, "resume_token": token, "steered_turns": steered}
        )

    async def events(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        token = requested_token(request)
        release = self.ctx.slots.try_acquire()
        if release is None:
            return streams_full(self.ctx)
        try:
            first = await self.ctx.blocking(lambda: self._first(session_id, token))
        except BadRequest as refused:
            release()
            return error_response(str(refused), refused.status)
        except BaseException:
            release()
            raise
        return sse_response(
            self._stream(session_id, token, first), self.ctx.limits, release=release
        )

    def _first(self, session_id: str, token: str) -> StreamMessage[AgentEvent] | None:
        """The first event after `token` if one is there; BadRequest if Dex refuses the token."""
        try:
            return self.ctx.client.read_event(session_id, token, _PROBE)
        except LongPollTimeoutError:
            return None
        except Exception as error:
            refused = dex_error(error)
            if refused is None:
                raise
            raise BadRequest(f"resume token {token!r} was refused: {refused}") from error

    async def _stream(
        self, session_id: str, token: str, first: StreamMessage[AgentEvent] | None
    ) -> AsyncIterator[ServerSentEvent]:
        client = self.ctx.client
        poll = timedelta(seconds=self.ctx.limits.poll_seconds)

        def produce(emit: Emit[tuple[str, str]], stopped: threading.Event) -> None:
            if first is not None and not emit(
                (encode_agent_event(first.value), first.resume_token)
            ):
                return
            cursor = EventCursor(client, session_id, first.resume_token if first else token)
            while not stopped.is_set():
                for message in cursor.next(poll):
                    if not emit((encode_agent_event(message.value), message.resume_token)):
                        return

        try:
            async for data, event_token in bridged(
                produce,
                executor=self.ctx.executor,
                queue_size=self.ctx.limits.queue_size,
                idle_timeout=self.ctx.limits.idle_timeout_seconds,
            ):
                yield ServerSentEvent(data=data, id=event_token, sep="\n")
        except StreamIdle:
            return  # the browser reconnects from the last id it received
