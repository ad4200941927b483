"""The runner's framework run state: the SDK's `RunState` JSON plus what Dex needs.

`sdk_state` is `RunState.to_json()` as the SDK wrote it; the next RunModel hands
it to `RunState.from_json`, which also restores the current agent after a
handoff. `pending` lists the interruptions the session turned into tool calls,
and `items` the turn's input items so far, so a turn that ends without an answer
can store its transcript without reading the SDK's own format; the two counts
say which of the resumed run's responses and items are new in the next Step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dex_agents.runner import PendingCall, RunStateError, RunStateFormat

__all__ = ["TurnState"]


_FORMAT = RunStateFormat(
    adapter="openai_agents", framework="openai-agents", legacy=RunStateFormat.marked("version", 1)
)


@dataclass(frozen=True, kw_only=True)
class TurnState:
    sdk_state: dict[str, Any]
    pending: list[PendingCall] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    responses: int = 0
    """How many model responses the SDK run holds so far (the next Step counts from it)."""
    run_items: int = 0
    """How many run items (`RunResult.new_items`) the SDK run holds so far."""

    def encode(self) -> str:
        return _FORMAT.encode(
            {
                "sdk_state": self.sdk_state,
                "pending": [p.to_json() for p in self.pending],
                "items": self.items,
                "responses": self.responses,
                "run_items": self.run_items,
            }
        )

    @classmethod
    def decode(cls, text: str | None) -> TurnState | None:
        return None if text is None else _FORMAT.decode(text, cls._read)

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> TurnState:
        sdk_state = data["sdk_state"]
        if not isinstance(sdk_state, dict):
            raise RunStateError("the framework run state holds no SDK RunState object")
        return cls(
            sdk_state=sdk_state,
            pending=[PendingCall.from_json(p) for p in data["pending"]],
            items=[dict(item) for item in data["items"]],
            responses=int(data["responses"]),
            run_items=int(data["run_items"]),
        )
