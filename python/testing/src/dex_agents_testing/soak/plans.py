"""Turn plans: what the scripted soak model does in one turn, carried in the user message.

The plan travels in the message text (`soak:` + compact JSON), so the Worker's
model needs no shared state with the driver: any Worker, after any restart,
reads the same plan from the stored conversation and answers the same way.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass

__all__ = [
    "KINDS",
    "PREFIX",
    "Call",
    "TurnPlan",
    "calls_for",
    "choose_plan",
    "parse_plan",
]

PREFIX = "soak:"

KINDS = (
    "tools",
    "approve",
    "reject",
    "ask",
    "toolq",
    "wait",
    "steer",
    "cancel",
    "fail",
    "task",
    "taskcancel",
    "compact",
    "text",
)
"""tools: read + idempotent + single-attempt calls in parallel; approve / reject: an
approval the driver grants or refuses; ask: ask_user; toolq: a tool that asks the
user a question; wait: durable_wait; steer: a steer while an approval waits;
cancel: cancel_turn while a durable wait runs; fail: a read and a single-attempt tool
whose every attempt fails (RecordToolFailure, RecordToolOutcomeUnknown); task: a tool
that starts a task PollToolTask follows to its result; taskcancel: cancel_turn while
such a task runs (CancelToolTask); compact: a turn whose input is over the compaction
threshold (CompactContext); text: an answer without tools."""

_WEIGHTS = {
    "tools": 4,
    "approve": 2,
    "reject": 1,
    "ask": 2,
    "toolq": 1,
    "wait": 1,
    "steer": 1,
    "cancel": 1,
    "fail": 1,
    "task": 1,
    "taskcancel": 1,
    "compact": 1,
    "text": 1,
}


@dataclass(frozen=True)
class TurnPlan:
    """One turn's plan; `tag` (`<session>/<n>`) makes every message text unique."""

    kind: str
    tag: str

    def message(self) -> str:
        return PREFIX + json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)

    def final_text(self) -> str:
        return f"done {self.tag}"

    def answer(self) -> str:
        return f"answer {self.tag}"


@dataclass(frozen=True)
class Call:
    """A tool call the model requests: ID, tool name and JSON arguments."""

    tool_call_id: str
    tool_name: str
    arguments: dict[str, object]


def choose_plan(rng: random.Random, tag: str) -> TurnPlan:
    kinds = list(_WEIGHTS)
    (kind,) = rng.choices(kinds, weights=[_WEIGHTS[k] for k in kinds])
    return TurnPlan(kind=kind, tag=tag)


def parse_plan(text: str | None) -> TurnPlan | None:
    if text is None or not text.startswith(PREFIX):
        return None
    data = json.loads(text[len(PREFIX) :])
    return TurnPlan(kind=str(data["kind"]), tag=str(data["tag"]))


def calls_for(plan: TurnPlan, model_call: int) -> list[Call]:
    """The tool calls of model call `model_call`; empty means the final text."""
    if model_call > 0:
        return []
    kind = plan.kind
    if kind == "tools":
        return [
            Call("r1", "lookup", {"key": plan.tag}),
            Call("w1", "upsert", {"key": plan.tag}),
            Call("c1", "charge", {"usd": 1}),
        ]
    if kind in ("approve", "reject"):
        return [Call("a1", "transfer", {"usd": 2})]
    if kind == "ask":
        return [Call("q1", "ask_user", {"question": f"which {plan.tag}?"})]
    if kind == "toolq":
        return [Call("s1", "survey", {"topic": plan.tag})]
    if kind == "wait":
        return [Call("d1", "durable_wait", {"seconds": 1, "reason": plan.tag})]
    if kind == "steer":
        return [Call("r1", "lookup", {"key": plan.tag}), Call("a1", "transfer", {"usd": 3})]
    if kind == "cancel":
        return [
            Call("r1", "lookup", {"key": plan.tag}),
            Call("d1", "durable_wait", {"seconds": 55, "reason": plan.tag}),
        ]
    if kind == "fail":
        return [Call("f1", "fetch", {"key": plan.tag}), Call("x1", "debit", {"usd": 4})]
    if kind == "task":
        return [Call("t1", "job", {"polls": 2})]
    if kind == "taskcancel":
        return [Call("t1", "job", {"polls": 0})]
    return []
