"""JSON responses and the request errors every route reports the same way."""

from __future__ import annotations

import json
from typing import Any

from dex import DexServiceError, WorkerInvocationError
from starlette.requests import Request
from starlette.responses import Response

from dex_agents.errors import (
    ClientRequestIdReusedError,
    SessionNotFoundError,
    SessionUnavailableError,
)

__all__ = ["BadRequest", "dex_error", "error_response", "json_response", "read_json_object"]


class BadRequest(Exception):
    """Input the route refuses; the message names what was wrong."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def json_response(
    value: object, *, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def error_response(message: str, status: int, *, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": message}, status=status, headers=headers)


def dex_error(error: Exception) -> BadRequest | None:
    """The request error a client or Dex failure means, or None for a server fault."""
    if isinstance(error, SessionNotFoundError):
        return BadRequest(str(error), status=404)
    if isinstance(error, ClientRequestIdReusedError):
        return BadRequest(str(error), status=409)
    if isinstance(error, SessionUnavailableError):
        return BadRequest(str(error), status=503)
    if isinstance(error, WorkerInvocationError):
        return BadRequest(f"no Worker of the session's Flow answered: {error.detail}", status=503)
    if isinstance(error, DexServiceError) and error.code.name == "INVALID_ARGUMENT":
        return BadRequest(f"Dex refused the request: {error.detail}")
    return None


async def read_json_object(request: Request) -> dict[str, Any]:
    """The body as a JSON object, or BadRequest saying why it is not one."""
    raw = await request.body()
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise BadRequest(f"the request body is not JSON ({error})") from None
    if not isinstance(value, dict):
        raise BadRequest(f"the request body must be a JSON object, got {type(value).__name__}")
    return value
