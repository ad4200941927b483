"""Session settings limits: what Clients send, and what StartAgentSession and
update_session_settings accept.

Shared by the session package, the Client and the codecs, so it sits below all three.
"""

from __future__ import annotations

import json
from typing import TypeVar

from dex_agents_contracts import Struct, decode, struct_to_json

__all__ = [
    "INVALID_START_SETTINGS",
    "MAX_SESSION_SETTINGS_BYTES",
    "SESSION_SETTINGS_SIZE_TOLERANCE_BYTES",
    "NotAnObject",
    "client_settings_problem",
    "decode_settings_leniently",
    "session_settings_problem",
    "settings_size",
]

T = TypeVar("T")

MAX_SESSION_SETTINGS_BYTES = 16_384
"""Largest compact UTF-8 JSON text of the settings a Client sends."""
SESSION_SETTINGS_SIZE_TOLERANCE_BYTES = 1_024
"""Extra bytes the session accepts, because the cores write some floats and
U+2028/U+2029 differently, so a Client's count can differ from ours."""

INVALID_START_SETTINGS = (
    "dex-agents: the start input's session_settings are not valid session settings"
)


def settings_size(settings: Struct) -> int:
    """UTF-8 length of the settings' compact JSON text."""
    text = json.dumps(
        struct_to_json(settings), ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return len(text.encode("utf-8"))


class NotAnObject(Struct):
    """Stands in for `session_settings` that are JSON but not an object.

    The wire codec refuses such a value outright; the session's own codecs decode
    it as this marker instead, so StartAgentSession can refuse the session with its
    documented reason and update_session_settings can return false.
    """


def session_settings_problem(settings: object) -> str | None:
    """Why the session refuses these settings, or None to accept them."""
    if not isinstance(settings, Struct) or isinstance(settings, NotAnObject):
        return "they are not a JSON object"
    try:
        size = settings_size(settings)
    except (TypeError, ValueError) as error:
        return f"they are not valid JSON: {error}"
    limit = MAX_SESSION_SETTINGS_BYTES + SESSION_SETTINGS_SIZE_TOLERANCE_BYTES
    if size > limit:
        return f"they exceed {limit} bytes"
    return None


def client_settings_problem(settings: Struct) -> str | None:
    """Why a Client refuses to send these settings: over MAX_SESSION_SETTINGS_BYTES,
    without the session's tolerance. Raises TypeError or ValueError for non-JSON."""
    if settings_size(settings) > MAX_SESSION_SETTINGS_BYTES:
        return f"they exceed {MAX_SESSION_SETTINGS_BYTES} bytes"
    return None


def decode_settings_leniently(message_type: type[T], text: str) -> T:
    """Decode a message with `session_settings`, reading settings that are not a JSON
    object as `NotAnObject` instead of failing the decode."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    settings = data.get("session_settings") if isinstance(data, dict) else None
    if settings is None or isinstance(settings, dict):
        return decode(message_type, text)
    data["session_settings"] = None
    decoded = decode(message_type, json.dumps(data))
    decoded.session_settings = NotAnObject()  # type: ignore[attr-defined]
    return decoded
