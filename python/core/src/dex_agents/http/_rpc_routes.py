"""POST endpoints for the session RPCs a UI calls; each answers `{"result": true|false}`.

The result is the RPC's own answer (false: not pending, blank text, refused
settings); a body the route cannot read gets 400 naming the field, an unknown
session 404. Every body may carry `client_request_id`: a caller that repeats a
POST whose answer it lost sends the same one, and the session applies the
request once (a new one is made per POST without it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from dex_agents._client_request_id import client_request_id_problem
from dex_agents.client import AgentSessionClient
from dex_agents.http._context import AppContext
from dex_agents.http._fields import (
    check_known,
    optional_bool,
    optional_str,
    required_bool,
    required_str,
)
from dex_agents.http._responses import (
    BadRequest,
    dex_error,
    error_response,
    json_response,
    read_json_object,
)

__all__ = ["rpc_routes"]

Call = Callable[[AgentSessionClient, str], bool]
Parse = Callable[[Mapping[str, Any]], Call]

_ID = "client_request_id"


def _fields(body: Mapping[str, Any], known: tuple[str, ...], what: str) -> str | None:
    """Refuses unknown fields; the body's client request ID, checked, or None."""
    check_known(body, (*known, _ID), what)
    request_id = optional_str(body, _ID, what)
    problem = client_request_id_problem(request_id) if request_id is not None else None
    if problem is not None:
        raise BadRequest(f"{what}: {problem}")
    return request_id


def _send(body: Mapping[str, Any]) -> Call:
    what = "send"
    request_id = _fields(body, ("text", "plan_mode"), what)
    text = required_str(body, "text", what)
    plan_mode = optional_bool(body, "plan_mode", what, False)
    return lambda client, session: client.send_user_message(
        session, text, plan_mode=plan_mode, client_request_id=request_id
    )


def _steer(body: Mapping[str, Any]) -> Call:
    what = "steer"
    request_id = _fields(body, ("text", "message_id"), what)
    text = optional_str(body, "text", what)
    message_id = optional_str(body, "message_id", what)
    if (text is None) == (message_id is None):
        raise BadRequest(f"{what}: give exactly one of 'text' and 'message_id'")
    return lambda client, session: client.steer_user_message(
        session, text=text, message_id=message_id, client_request_id=request_id
    )


def _cancel(body: Mapping[str, Any]) -> Call:
    what = "cancel"
    request_id = _fields(body, ("turn_id",), what)
    turn_id = optional_str(body, "turn_id", what)
    return lambda client, session: client.cancel_turn(
        session, turn_id, client_request_id=request_id
    )


def _resolve(body: Mapping[str, Any]) -> Call:
    what = "resolve"
    request_id = _fields(body, ("interrupt_id", "approved", "rejection_message"), what)
    interrupt_id = required_str(body, "interrupt_id", what)
    approved = required_bool(body, "approved", what)
    rejection = optional_str(body, "rejection_message", what)
    return lambda client, session: client.resolve_interrupt(
        session,
        interrupt_id,
        approved=approved,
        rejection_message=rejection,
        client_request_id=request_id,
    )


def _answer(body: Mapping[str, Any]) -> Call:
    what = "answer"
    request_id = _fields(body, ("interrupt_id", "answer"), what)
    interrupt_id = required_str(body, "interrupt_id", what)
    answer = required_str(body, "answer", what)
    return lambda client, session: client.answer_question(
        session, interrupt_id, answer, client_request_id=request_id
    )


def _settings(body: Mapping[str, Any]) -> Call:
    what = "settings"
    request_id = _fields(body, ("session_settings",), what)
    if "session_settings" not in body:
        raise BadRequest(f"{what}: field 'session_settings' is required")
    settings = body["session_settings"]
    if not isinstance(settings, dict):
        raise BadRequest(f"{what}: field 'session_settings' must be a JSON object ({{}} clears)")
    return lambda client, session: client.update_session_settings(
        session, settings, client_request_id=request_id
    )


_PARSERS: dict[str, Parse] = {
    "send": _send,
    "steer": _steer,
    "cancel": _cancel,
    "resolve": _resolve,
    "answer": _answer,
    "settings": _settings,
}


def rpc_routes(ctx: AppContext) -> list[Route]:
    def endpoint(parse: Parse) -> Callable[[Request], Awaitable[Response]]:
        async def handle(request: Request) -> Response:
            session_id = request.path_params["session_id"]
            try:
                call = parse(await read_json_object(request))
                result = await ctx.blocking(lambda: call(ctx.client, session_id))
            except BadRequest as refused:
                return error_response(str(refused), refused.status)
            except Exception as error:
                mapped = dex_error(error)
                if mapped is None:
                    raise
                return error_response(str(mapped), mapped.status)
            return json_response({"result": result})

        return handle

    return [
        Route(f"/sessions/{{session_id}}/{name}", endpoint(parse), methods=["POST"])
        for name, parse in _PARSERS.items()
    ]
