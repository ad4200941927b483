"""The framework run state a turn keeps between its Steps.

It holds the turn's Pydantic AI messages that the session has not stored yet
(everything after the turn's user message, in `ModelMessagesTypeAdapter` JSON)
plus the calls that wait for Dex results. The stored history plus these
messages is exactly the `message_history` Pydantic AI continues from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dex_agents.runner import PendingCall, RunStateFormat
from pydantic_ai.messages import ModelMessage

from dex_agents_pydantic_ai._messages import dump_messages, load_messages

__all__ = ["RunState"]


_FORMAT = RunStateFormat(
    adapter="pydantic_ai",
    framework="pydantic-ai-slim",
    legacy=RunStateFormat.marked("format", "dex_agents_pydantic_ai.run_state.v1"),
)


@dataclass(frozen=True, kw_only=True)
class RunState:
    messages: list[ModelMessage] = field(default_factory=list)
    """The turn's unstored messages, oldest first."""
    pending: list[PendingCall] = field(default_factory=list)
    """Calls of the last response that wait for Dex results, in the model's order."""
    consecutive_retries: int = 0
    """Model calls in a row that the framework asked to redo (output or argument retries)."""

    def encode(self) -> str:
        return _FORMAT.encode(
            {
                "messages": dump_messages(self.messages),
                "pending": [p.to_json() for p in self.pending],
                "consecutive_retries": self.consecutive_retries,
            }
        )

    @classmethod
    def decode(cls, text: str | None) -> RunState:
        return cls() if text is None else _FORMAT.decode(text, cls._read)

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> RunState:
        return cls(
            messages=load_messages(data["messages"]),
            pending=[PendingCall.from_json(p) for p in data["pending"]],
            consecutive_retries=int(data["consecutive_retries"]),
        )
