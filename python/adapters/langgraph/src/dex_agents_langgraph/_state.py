"""The framework run state a LangGraph turn keeps between its Steps.

It is the turn's graph thread (every checkpoint and pending write, exported
from `DexCheckpointSaver`), the interrupts that wait for Dex results, and two
counts into the graph's message list: where the turn's own messages start and
how many the previous Step had seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PendingCall", "RunState", "RunStateError"]

_FORMAT = "dex_agents_langgraph.run_state.v1"


class RunStateError(ValueError):
    """The run state is not one this runner wrote, or does not fit the turn's records."""


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    """A tool call the graph paused on; Dex supplies its result on resume."""

    tool_call_id: str
    tool_name: str
    interrupt_id: str


@dataclass(frozen=True, kw_only=True)
class RunState:
    thread: dict[str, Any] | None = None
    """The exported graph thread; None before the turn's first Step."""
    pending: list[PendingCall] = field(default_factory=list)
    continue_interrupts: list[str] = field(default_factory=list)
    """Interrupts of a model call left for the next Step."""
    input_count: int = 0
    """Messages given to the graph at the turn's start (the stored history)."""
    seen_count: int = 0
    """Messages the graph held when the previous Step ended."""

    def encode(self) -> str:
        return json.dumps(
            {
                "format": _FORMAT,
                "thread": self.thread,
                "pending": [
                    {
                        "tool_call_id": p.tool_call_id,
                        "tool_name": p.tool_name,
                        "interrupt_id": p.interrupt_id,
                    }
                    for p in self.pending
                ],
                "continue_interrupts": self.continue_interrupts,
                "input_count": self.input_count,
                "seen_count": self.seen_count,
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
            return cls(
                thread=data["thread"],
                pending=[
                    PendingCall(
                        tool_call_id=str(p["tool_call_id"]),
                        tool_name=str(p["tool_name"]),
                        interrupt_id=str(p["interrupt_id"]),
                    )
                    for p in data["pending"]
                ],
                continue_interrupts=[str(i) for i in data["continue_interrupts"]],
                input_count=int(data["input_count"]),
                seen_count=int(data["seen_count"]),
            )
        except RunStateError:
            raise
        except (ValueError, KeyError, TypeError) as error:
            raise RunStateError(f"the LangGraph run state is malformed: {error!r}") from error
