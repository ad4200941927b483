"""The framework run state a turn keeps between its Steps.

It holds the turn's Pydantic AI messages that the session has not stored yet
(everything after the turn's user message, in `ModelMessagesTypeAdapter` JSON)
plus the calls that wait for Dex results. The stored history plus these
messages is exactly the `message_history` Pydantic AI continues from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic_ai.messages import ModelMessage

from dex_agents_pydantic_ai._messages import dump_messages, load_messages

__all__ = ["PendingCall", "RunState", "RunStateError"]

_FORMAT = "dex_agents_pydantic_ai.run_state.v1"


class RunStateError(ValueError):
    """The run state is not one this runner wrote, or does not fit the turn's records."""


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """A deferred call whose result Dex supplies on resume."""

    tool_call_id: str
    tool_name: str


@dataclass(frozen=True, kw_only=True)
class RunState:
    messages: list[ModelMessage] = field(default_factory=list)
    """The turn's unstored messages, oldest first."""
    pending: list[PendingCall] = field(default_factory=list)
    """Calls of the last response that wait for Dex results, in the model's order."""
    consecutive_retries: int = 0
    """Model calls in a row that the framework asked to redo (output or argument retries)."""

    def encode(self) -> str:
        return json.dumps(
            {
                "format": _FORMAT,
                "messages": dump_messages(self.messages),
                "pending": [
                    {"tool_call_id": p.tool_call_id, "tool_name": p.tool_name} for p in self.pending
                ],
                "consecutive_retries": self.consecutive_retries,
            },
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, text: str | None) -> RunState:
        if text is None:
            return cls()
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("format") != _FORMAT:
                raise RunStateError(f"expected a run state of format {_FORMAT!r}")
            pending = [
                PendingCall(tool_call_id=str(p["tool_call_id"]), tool_name=str(p["tool_name"]))
                for p in data["pending"]
            ]
            return cls(
                messages=load_messages(data["messages"]),
                pending=pending,
                consecutive_retries=int(data["consecutive_retries"]),
            )
        except RunStateError:
            raise
        except (ValueError, KeyError, TypeError) as error:
            raise RunStateError(f"unreadable Pydantic AI run state: {error}") from error
