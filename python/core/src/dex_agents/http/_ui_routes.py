"""The AI SDK UI message stream of one turn: GET to (re)connect, POST to send or approve."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from dex import LongPollTimeoutError
from sse_starlette import ServerSentEvent
from starlette.requests import Request
from starlette.responses import Response

from dex_agents.http._bridge import StreamIdle, bridged
from dex_agents.http._context import AppContext
from dex_agents.http._event_routes import requested_token, streams_full
from dex_agents.http._fields import check_known, optional_str, required_bool, required_str
from dex_agents.http._responses import (
    BadRequest,
    dex_error,
    error_response,
    read_json_object,
)
from dex_agents.http._sse import compact_json, sse_response
from dex_agents.http._ui_reader import TurnReader, UiItem, refused_token
from dex_agents.http._ui_state import TurnState
from dex_agents.http._ui_stored import stored_turn_chunks
from dex_agents.http._ui_token import UiToken
from dex_agents.http._ui_translate import UiTurnTranslator

__all__ = ["UI_STREAM_HEADERS", "UiRoutes"]

UI_STREAM_HEADERS = {"x-vercel-ai-ui-message-stream": "v1", "x-accel-buffering": "no"}
_TURN_WAIT_SECONDS = 60.0
# The shortest Dex long poll (whole seconds; 0 would mean the server's longest).
_PROBE = timedelta(seconds=1)

Approval = tuple[str, bool, str | None]


class UiRoutes:
    def __init__(self, ctx: AppContext) -> None:
        self.ctx = ctx

    # --- GET: connect or reconnect ------------------------------------------------------

    async def stream(self, request: Request) -> Response:
        """The turn a token names (Last-Event-ID or `?after=`), `?turn=`, or the active one.

        A token replays its turn from the start; `?exact=1` sends only what follows
        the token. 204 when no turn is named and none is active.
        """
        session_id = request.path_params["session_id"]
        token_text = requested_token(request)
        exact = request.query_params.get("exact") in ("1", "true")
        turn_param = request.query_params.get("turn")

        def plan() -> TurnReader | None:
            if token_text:
                token = self._token(token_text, session_id)
                state = TurnState(self.ctx.client, session_id, token.turn_id)
                skip = (token.position, token.chunk) if exact else None
                start, refused = self._retained_start(state, token.start)
                if start is None:
                    return self._stored_reader(state, token.start, refused, skip)
                return self._reader(state, start, start, skip_through=skip)
            turn_id: str | None = turn_param or self._active_turn(session_id)
            if turn_id is None:
                return None
            chain = TurnState(self.ctx.client, session_id, turn_id).listed_chain()
            if chain is None:
                return self._stored_reader(TurnState(self.ctx.client, session_id, turn_id), "")
            first, listed = chain
            state = TurnState(self.ctx.client, session_id, first)
            return self._reader(state, listed, listed)

        return await self._respond(plan)

    # --- POST: a user message or approval answers -----------------------------------------

    async def submit(self, request: Request) -> Response:
        """useChat's body (`messages`), or one `tool-approval-response` chunk.

        A last message from the user is sent and its turn streamed; approval
        answers (parts in state `approval-responded`, or the chunk) resolve
        interrupts pending in the active turn, and the turn's continuation streams.
        """
        session_id = request.path_params["session_id"]
        try:
            body = await read_json_object(request)
            text, approvals = _parse_submit(body)
        except BadRequest as refused:
            return error_response(str(refused), refused.status)

        def plan() -> TurnReader | None:
            if text is not None:
                return self._send(session_id, text)
            return self._approve(session_id, approvals)

        return await self._respond(plan)

    # --- planning (on a thread) ---------------------------------------------------------

    def _token(self, text: str, session_id: str) -> UiToken:
        try:
            token = UiToken.decode(text)
        except ValueError as error:
            raise BadRequest(str(error)) from None
        if token.session_id != session_id:
            raise BadRequest(
                f"the UI stream token belongs to session {token.session_id!r}, not {session_id!r}"
            )
        return token

    def _retained_start(self, state: TurnState, start: str) -> tuple[str | None, bool]:
        """(where to read the turn from, whether Dex refused `start`).

        `start` while the turn's `turn_started` follows it, else the turn's listed
        start; None when the Stream no longer holds the turn's start (trimmed).
        """
        refused = False
        try:
            first = state.client.read_event(state.session_id, start, _PROBE)
            event = first.value
            if event.type == "turn_started" and event.turn_id == state.turn_id:
                return start, False
        except LongPollTimeoutError:
            pass
        except Exception as error:
            if not refused_token(error):
                raise
            refused = True
        return state.listed_start(), refused

    def _stored_reader(
        self,
        state: TurnState,
        start: str,
        refused: bool = False,
        skip: tuple[str, int] | None = None,
    ) -> TurnReader:
        """An ended turn whose events are gone, rebuilt from its stored messages.

        A turn still running reads on from `start`, what the Stream kept of it.
        """
        stored = state.stored_turn()
        if stored is None and not refused and not state.turn_ended(fresh=True):
            return self._reader(state, start, start, skip_through=skip)
        if stored is None:
            what = "the UI stream token's position was refused and turn" if refused else "turn"
            raise BadRequest(
                f"{what} {state.turn_id!r} has no retained events and no stored messages "
                "of an ended turn in this session"
            )
        messages, error = stored
        if skip is not None and skip[0] != start:
            skip = None  # a token of the events, not of the rebuilt chunks: replay them all
        reader = self._reader(state, start, start, skip_through=skip)
        reader.stored = stored_turn_chunks(state.turn_id, messages, error)
        return reader

    def _active_turn(self, session_id: str) -> str | None:
        state = self.ctx.client.get_snapshot(session_id).state
        return state.active_turn_id if state is not None else None

    def _reader(
        self,
        state: TurnState,
        start: str,
        read_from: str,
        *,
        joins_midway: tuple[tuple[str, ...], dict[str, str]] | None = None,
        skip_through: tuple[str, int] | None = None,
    ) -> TurnReader:
        translator = UiTurnTranslator(state.turn_id, state.tool_facts, state.steered_messages)
        translator.follow(state.current)
        return TurnReader(
            state=state,
            translator=translator,
            start=start,
            read_from=read_from,
            poll=timedelta(seconds=self.ctx.limits.poll_seconds),
            joins_midway=joins_midway,
            skip_through=skip_through,
        )

    def _tail(self, session_id: str) -> str:
        client = self.ctx.client
        page = client.client.list_stream_messages(session_id, client.flow.events, 1)
        return page.messages[0].resume_token if page.messages else ""

    def _send(self, session_id: str, text: str) -> TurnReader:
        client = self.ctx.client
        tail = self._tail(session_id)
        if not client.send_user_message(session_id, text):
            raise BadRequest("the session refused the message (blank text)")
        start = tail
        for event, _ in client.follow_events(
            session_id,
            tail,
            until=lambda e: e.type == "turn_started",
            deadline_seconds=_TURN_WAIT_SECONDS,
        ):
            if event.type == "turn_started" and event.turn_id is not None:
                state = TurnState(client, session_id, event.turn_id)
                return self._reader(state, start, start)
        raise AssertionError("follow_events returns only by raising")  # pragma: no cover

    def _approve(self, session_id: str, approvals: list[Approval]) -> TurnReader:
        client = self.ctx.client
        turn_id = self._active_turn(session_id)
        if turn_id is None:
            raise BadRequest(f"session {session_id!r} has no active turn to approve in", status=409)
        state = TurnState(client, session_id, turn_id)
        for interrupt_id, _, _ in approvals:
            if not state.approval_pending(interrupt_id):
                raise BadRequest(
                    f"approval {interrupt_id!r} is not pending in the active turn {turn_id!r}",
                    status=409,
                )
        # What the browser's message shows, read before the answers let the turn go on
        # (a turn that then ends at once keeps no tool call records).
        snapshot = state.snapshot()
        known = tuple(t.tool_call_id for t in snapshot.tool_calls if t.turn_id == turn_id)
        asked = {i.interrupt_id: i.tool_call_id for i in snapshot.pending_interrupts}
        # A steered turn goes on in the message of the turn it steered.
        first, start = state.listed_chain() or (turn_id, "")
        state = TurnState(client, session_id, first)
        state.follow(turn_id)
        tail = self._tail(session_id)
        for interrupt_id, approved, reason in approvals:
            if not client.resolve_interrupt(
                session_id, interrupt_id, approved=approved, rejection_message=reason
            ):
                raise BadRequest(f"approval {interrupt_id!r} was no longer pending", status=409)
        reader = self._reader(state, start, tail, joins_midway=(known, asked))
        reader.answered_here = frozenset(interrupt_id for interrupt_id, _, _ in approvals)
        return reader

    # --- responding -----------------------------------------------------------------------

    async def _respond(self, plan: Callable[[], TurnReader | None]) -> Response:
        release = self.ctx.slots.try_acquire()
        if release is None:
            return streams_full(self.ctx)
        try:
            reader = await self.ctx.blocking(plan)
        except BadRequest as refused:
            release()
            return error_response(str(refused), refused.status)
        except Exception as error:
            release()
            refused_error = dex_error(error)
            if refused_error is None:
                raise
            return error_response(str(refused_error), refused_error.status)
        if reader is None:
            release()
            return Response(status_code=204)
        return sse_response(
            self._chunks(reader), self.ctx.limits, release=release, headers=UI_STREAM_HEADERS
        )

    async def _chunks(self, reader: TurnReader) -> AsyncIterator[ServerSentEvent]:
        try:
            async for item in bridged(
                reader.run,
                executor=self.ctx.executor,
                queue_size=self.ctx.limits.queue_size,
                idle_timeout=self.ctx.limits.idle_timeout_seconds,
            ):
                yield _framed(item)
        except StreamIdle:
            return  # no [DONE]: the transport reconnects with the last id


def _framed(item: UiItem) -> ServerSentEvent:
    if item is None:
        return ServerSentEvent(data="[DONE]", sep="\n")
    chunk, token = item
    return ServerSentEvent(data=compact_json(chunk), id=token, sep="\n")


def _parse_submit(body: dict[str, Any]) -> tuple[str | None, list[Approval]]:
    """(user text, no approvals) or (None, approvals) from a POST body."""
    if body.get("type") == "tool-approval-response":
        what = "tool-approval-response"
        check_known(body, ("type", "approvalId", "approved", "reason", "providerExecuted"), what)
        approval = (
            required_str(body, "approvalId", what),
            required_bool(body, "approved", what),
            optional_str(body, "reason", what),
        )
        return None, [approval]
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        raise BadRequest(
            "the body needs 'messages' (a non-empty array of UI messages) "
            "or type 'tool-approval-response'"
        )
    last = messages[-1]
    parts = last.get("parts")
    if not isinstance(parts, list):
        raise BadRequest("messages[-1]: field 'parts' must be an array")
    if last.get("role") == "user":
        text = "".join(
            p["text"]
            for p in parts
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
        return text, []
    if last.get("role") != "assistant":
        raise BadRequest(f"messages[-1]: role {last.get('role')!r} is neither user nor assistant")
    approvals: list[Approval] = []
    for index, part in enumerate(parts):
        if not isinstance(part, dict) or part.get("state") != "approval-responded":
            continue
        answer = part.get("approval")
        what = f"messages[-1].parts[{index}].approval"
        if not isinstance(answer, dict):
            raise BadRequest(f"{what} must be an object")
        approvals.append(
            (
                required_str(answer, "id", what),
                required_bool(answer, "approved", what),
                optional_str(answer, "reason", what),
            )
        )
    if not approvals:
        raise BadRequest("messages[-1] is an assistant message without approval answers")
    return None, approvals
