"""The framework run state a LangGraph turn keeps between its Steps.

It is the turn's graph thread (every checkpoint and pending write, exported
from `DexCheckpointSaver`), the interrupts that wait for Dex results, and two
counts into the graph's message list: where the turn's own messages start and
how many the previous Step had seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dex_agents.runner import PendingCall, RunStateFormat

__all__ = ["InterruptedCall", "RunState"]


@dataclass(frozen=True, kw_only=True)
class InterruptedCall(PendingCall):
    """A tool call the graph paused on, with the interrupt its result resumes."""

    interrupt_id: str


_FORMAT = RunStateFormat(
    adapter="langgraph",
    framework="langgraph",
    legacy=RunStateFormat.marked("format", "dex_agents_langgraph.run_state.v1"),
)


@dataclass(frozen=True, kw_only=True)
class RunState:
    thread: dict[str, Any] | None = None
    """The exported graph thread; None before the turn's first Step."""
    pending: list[InterruptedCall] = field(default_factory=list)
    continue_interrupts: list[str] = field(default_factory=list)
    """Interrupts of a model call left for the next Step."""
    input_count: int = 0
    """Messages given to the graph at the turn's start (the stored history)."""
    seen_count: int = 0
    """Messages the graph held when the previous Step ended."""

    def encode(self) -> str:
        return _FORMAT.encode(
            {
                "thread": self.thread,
                "pending": [p.to_json() for p in self.pending],
                "continue_interrupts": self.continue_interrupts,
                "input_count": self.input_count,
                "seen_count": self.seen_count,
            }
        )

    @classmethod
    def decode(cls, text: str | None) -> RunState:
        return cls() if text is None else _FORMAT.decode(text, cls._read)

    @classmethod
    def _read(cls, data: Mapping[str, Any]) -> RunState:
        return cls(
            thread=data["thread"],
            pending=[InterruptedCall.from_json(p) for p in data["pending"]],
            continue_interrupts=[str(i) for i in data["continue_interrupts"]],
            input_count=int(data["input_count"]),
            seen_count=int(data["seen_count"]),
        )
