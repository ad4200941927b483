"""The UI stream's resume token: a Dex position plus the parts the browser holds open.

One token rides in the SSE `id` of every chunk. A reconnect replays the token's
turn from `start` by default; an exact continuation replays it silently up to
`position` and chunk `chunk` and sends only what follows.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["OpenParts", "UiToken"]

_PREFIX = "u1."


@dataclass(frozen=True, kw_only=True)
class UiToken:
    session_id: str
    turn_id: str
    start: str
    """Dex token to read the turn from ("" = the oldest retained event)."""
    position: str
    """Dex token of the last event read when the chunk was made."""
    chunk: int
    """Index of the chunk among those made at `position`."""
    open_parts: tuple[str, ...] = field(default_factory=tuple)

    def encode(self) -> str:
        fields = [
            self.session_id,
            self.turn_id,
            self.start,
            self.position,
            self.chunk,
            list(self.open_parts),
        ]
        text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
        return _PREFIX + base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @staticmethod
    def decode(text: str) -> UiToken:
        """The token `encode` wrote; ValueError saying what is wrong otherwise."""
        if not text.startswith(_PREFIX):
            raise ValueError(f"UI stream token {text[:40]!r} does not start with {_PREFIX!r}")
        body = text[len(_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            fields: Any = json.loads(raw)
        except (binascii.Error, ValueError):
            raise ValueError(f"UI stream token {text[:40]!r} is malformed") from None
        if (
            not isinstance(fields, list)
            or len(fields) != 6
            or not all(isinstance(f, str) for f in fields[:4])
            or not isinstance(fields[4], int)
            or isinstance(fields[4], bool)
            or fields[4] < 0
            or not isinstance(fields[5], list)
            or not all(isinstance(p, str) for p in fields[5])
        ):
            raise ValueError(f"UI stream token {text[:40]!r} is malformed")
        return UiToken(
            session_id=fields[0],
            turn_id=fields[1],
            start=fields[2],
            position=fields[3],
            chunk=fields[4],
            open_parts=tuple(fields[5]),
        )


class OpenParts:
    """Which text and reasoning parts are open after each chunk, in opening order."""

    def __init__(self) -> None:
        self._open: list[str] = []

    def apply(self, chunk: dict[str, Any]) -> tuple[str, ...]:
        kind = chunk["type"]
        if kind in ("text-start", "reasoning-start"):
            self._open.append(chunk["id"])
        elif kind in ("text-end", "reasoning-end") and chunk["id"] in self._open:
            self._open.remove(chunk["id"])
        elif kind in ("reset-step", "finish-step", "finish", "error"):
            self._open.clear()
        return tuple(self._open)
