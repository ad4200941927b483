"""The turn-continuation hook: keep a turn going after the model answered or called tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from dex_agents.models import ModelToolCall

__all__ = [
    "MAX_CONSECUTIVE_CONTINUATIONS",
    "TurnContinuation",
    "TurnContinuationContext",
    "TurnContinuationDecision",
    "TurnContinuationHook",
]

MAX_CONSECUTIVE_CONTINUATIONS = 8
"""A turn fails (`turn_error`) when the hook continues it more often in a row."""


@dataclass(frozen=True, kw_only=True)
class TurnContinuation:
    """Make another model call in this turn, showing the model `message` as user text."""

    message: str


TurnContinuationDecision: TypeAlias = TurnContinuation | Literal["end"] | None
"""After an answer: a continuation, or None/`end` to end the turn. After tool calls:
a continuation shown after the results, `end` to end the turn with the results and
no further model call, or None to give the model the results as usual."""


@dataclass(frozen=True, kw_only=True)
class TurnContinuationContext:
    """The model response the hook decides on."""

    flow_id: str
    turn_id: str
    text: str | None
    """The response's text (the answer, when there are no tool calls)."""
    tool_calls: Sequence[ModelToolCall]
    """The response's tool calls; empty after an answer."""
    consecutive_continuations: int
    """Continuations in a row before this response."""
    session_settings: Mapping[str, object] = field(default_factory=dict)


TurnContinuationHook: TypeAlias = Callable[
    [TurnContinuationContext], TurnContinuationDecision | Awaitable[TurnContinuationDecision]
]
