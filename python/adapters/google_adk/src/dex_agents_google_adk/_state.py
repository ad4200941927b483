"""The runner's framework run state: the turn's ADK session events plus what Dex needs.

`events` are the session's events of the turn so far, as ADK wrote them (its
user event, the model responses, the function responses, the resumable
invocation's bookkeeping); with the stored messages before the turn
(`history`, a count) they rebuild the ADK session, and the next RunModel
resumes `invocation_id` with the recorded results. `pending` lists the calls
the session turned into tool Steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.adk.events import Event

__all__ = ["PendingCall", "RunStateError", "TurnState"]

_VERSION = 1


class RunStateError(ValueError):
    """The framework run state cannot be read (another runner's state, or corrupt)."""


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    tool_call_id: str
    tool_name: str


@dataclass(frozen=True, kw_only=True)
class TurnState:
    invocation_id: str
    history: int
    """How many stored messages come before the turn (its user message excluded)."""
    events: list[Event] = field(default_factory=list)
    pending: list[PendingCall] = field(default_factory=list)

    def encode(self) -> str:
        data: dict[str, Any] = {
            "version": _VERSION,
            "invocation_id": self.invocation_id,
            "history": self.history,
            "events": [json.loads(e.model_dump_json(exclude_none=True)) for e in self.events],
            "pending": [
                {"tool_call_id": p.tool_call_id, "tool_name": p.tool_name} for p in self.pending
            ],
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | None) -> TurnState | None:
        if text is None:
            return None
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("version") != _VERSION:
                version = data.get("version") if isinstance(data, dict) else None
                raise RunStateError(
                    "the framework run state was not written by AdkRunner "
                    f"(state version {version!r}, expected {_VERSION})"
                )
            return cls(
                invocation_id=str(data["invocation_id"]),
                history=int(data["history"]),
                events=[Event.model_validate(e) for e in data["events"]],
                pending=[
                    PendingCall(tool_call_id=str(p["tool_call_id"]), tool_name=str(p["tool_name"]))
                    for p in data["pending"]
                ],
            )
        except RunStateError:
            raise
        except (ValueError, KeyError, TypeError) as error:
            raise RunStateError(f"unreadable ADK run state: {error}") from error
