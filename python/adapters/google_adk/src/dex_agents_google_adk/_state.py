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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dex_agents.runner import PendingCall, RunStateFormat
from google.adk.events import Event

__all__ = ["TurnState"]


_FORMAT = RunStateFormat(
    adapter="google_adk", framework="google-adk", legacy=RunStateFormat.marked("version", 1)
)


@dataclass(frozen=True, kw_only=True)
class TurnState:
    invocation_id: str
    history: int
    """How many stored messages come before the turn (its user message excluded)."""
    events: list[Event] = field(default_factory=list)
    pending: list[PendingCall] = field(default_factory=list)

    def encode(self) -> str:
        return _FORMAT.encode(
            {
                "invocation_id": self.invocation_id,
                "history": self.history,
                "events": [json.loads(e.model_dump_json(exclude_none=True)) for e in self.events],
                "pending": [p.to_json() for p in self.pending],
            }
        )

    @classmethod
    def decode(cls, text: str | None) -> TurnState | None:
        return None if text is None else _FORMAT.decode(text, cls._read)

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> TurnState:
        return cls(
            invocation_id=str(data["invocation_id"]),
            history=int(data["history"]),
            events=[Event.model_validate(e) for e in data["events"]],
            pending=[PendingCall.from_json(p) for p in data["pending"]],
        )
