"""What a client request ID may be, checked alike by the clients and the session Flow.

The ID becomes an AttributeMap instance key (`ClientRequests/<id>`), which may not
hold `/`; a small alphabet also keeps it readable in history and logs.
Shared by the session package, the Client and the HTTP app, so it sits below all three.
"""

from __future__ import annotations

import re
import uuid

__all__ = [
    "CLIENT_REQUEST_ID_MAX_LENGTH",
    "client_request_id_problem",
    "new_client_request_id",
]

CLIENT_REQUEST_ID_MAX_LENGTH = 128
_ALLOWED = re.compile(r"[A-Za-z0-9._:-]+")


def client_request_id_problem(value: object) -> str | None:
    """Why `value` cannot be a client request ID, or None when it can."""
    if not isinstance(value, str):
        return f"`client_request_id` must be a string, not {type(value).__name__}"
    if not value or len(value) > CLIENT_REQUEST_ID_MAX_LENGTH:
        return (
            f"`client_request_id` must be 1 to {CLIENT_REQUEST_ID_MAX_LENGTH} characters "
            f"long, got {len(value)}"
        )
    if _ALLOWED.fullmatch(value) is None:
        return (
            f"`client_request_id` {value!r} may hold only A-Z, a-z, 0-9 and the characters . _ : -"
        )
    return None


def new_client_request_id() -> str:
    """A fresh ID for one logical request (a random UUID)."""
    return str(uuid.uuid4())
