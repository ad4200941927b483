"""Errors the chat and inspect show in words: a user never sees a traceback."""

from __future__ import annotations

import grpc
from dex import DexServiceError

from dex_agents.errors import AgentSessionError

__all__ = ["ChatError", "describe_error", "is_connection_error"]


class ChatError(Exception):
    """A failure the command line prints as one message and exits 1 on."""


_UNREACHABLE = ("failed to connect", "connection refused", "unavailable", "socket closed")


def is_connection_error(error: BaseException) -> bool:
    """The Dex server is down or unreachable (as opposed to refusing a request)."""
    if isinstance(error, grpc.RpcError):
        code = error.code() if callable(getattr(error, "code", None)) else None
        return code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    if isinstance(error, DexServiceError):
        text = str(error).lower()
        return any(marker in text for marker in _UNREACHABLE)
    return isinstance(error, ConnectionError)


def describe_error(error: BaseException, *, address: str | None = None) -> str:
    """One line naming what went wrong."""
    if is_connection_error(error):
        where = f" at {address}" if address else ""
        return f"cannot reach the Dex server{where}: {_first_line(error)}"
    if isinstance(error, AgentSessionError | ChatError):
        return str(error)
    if isinstance(error, grpc.RpcError):
        details = error.details() if callable(getattr(error, "details", None)) else ""
        return f"Dex refused the call: {details}"
    return f"{type(error).__name__}: {_first_line(error)}"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
