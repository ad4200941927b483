"""The Stepwise run state: the turn's items the session has not stored yet.

Stored messages replay from `AgentTurnContext.messages`; the run state holds only
what came after them in this turn (responses with tool calls, their results), plus
the continuation bookkeeping, in the shared run-state envelope (adapter `stepwise`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from dex_agents.runner import RunStateError, RunStateFormat
from dex_agents.stepwise._continuation import TurnContinuation
from dex_agents.stepwise._items import (
    Item,
    ToolCallItem,
    ToolResultItem,
    item_from_json_object,
    item_to_json_object,
)

__all__ = ["RunState"]


@dataclass(frozen=True, kw_only=True)
class RunState:
    """What `run_model_step` needs to continue the turn."""

    items: Sequence[Item] = ()
    """Unstored items of the turn, oldest first."""
    consecutive_continuations: int = 0
    """Continuations in a row so far; written only after a continuation."""
    after_tool_calls: TurnContinuation | Literal["end"] | None = None
    """The continuation hook's decision on the pending tool calls, applied on resume."""

    def encode(self) -> str:
        value: dict[str, object] = {"items": [item_to_json_object(item) for item in self.items]}
        if self.consecutive_continuations:
            value["consecutive_continuations"] = self.consecutive_continuations
        if self.after_tool_calls == "end":
            value["after_tool_calls"] = {"decision": "end"}
        elif isinstance(self.after_tool_calls, TurnContinuation):
            value["after_tool_calls"] = {
                "decision": "continue",
                "message": self.after_tool_calls.message,
            }
        return _FORMAT.encode(value)

    @staticmethod
    def decode(text: str | None) -> RunState:
        """Reads a run state; None (a turn's first model call) is the empty state.

        Raises:
            RunStateError: The text is not a Stepwise run state.
        """
        return RunState() if text is None else _FORMAT.decode(text, _read)

    def unanswered_tool_calls(self) -> list[ToolCallItem]:
        """Tool calls in the state that have no result item yet, in call order."""
        answered = {item.tool_call_id for item in self.items if isinstance(item, ToolResultItem)}
        return [
            item
            for item in self.items
            if isinstance(item, ToolCallItem) and item.tool_call_id not in answered
        ]


def _read(value: Mapping[str, Any]) -> RunState:
    items = value.get("items")
    if not isinstance(items, list):
        raise RunStateError("the run state has no `items` list")
    count = value.get("consecutive_continuations", 0)
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise RunStateError("`consecutive_continuations` must be a non-negative integer")
    after = value.get("after_tool_calls")
    decision: TurnContinuation | Literal["end"] | None = None
    if isinstance(after, dict) and after.get("decision") == "end":
        decision = "end"
    elif isinstance(after, dict) and isinstance(after.get("message"), str):
        decision = TurnContinuation(message=after["message"])
    elif after is not None:
        raise RunStateError(f"unknown `after_tool_calls` value {after!r}")
    return RunState(
        items=tuple(item_from_json_object(item) for item in items),
        consecutive_continuations=count,
        after_tool_calls=decision,
    )


_FORMAT = RunStateFormat(adapter="stepwise", legacy=RunStateFormat.marked("version", 1))
