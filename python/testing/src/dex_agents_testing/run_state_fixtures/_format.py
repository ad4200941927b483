"""The run-state fixture file: one recorded `run_model_step` input and its next action.

Shared with the TypeScript adapters (issue 42): `turn_context` is the
`dex.agents.v1.RunnerTurnContext` wire JSON, `expected` the normalised outcome.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from dex_agents.runner import AgentTurnOutcome, ToolCallsRequested, TurnCompleted, TurnContinued
from dex_agents_contracts import (
    MessageRole,
    RunnerTurnContext,
    decode_runner_turn_context,
    encode_runner_turn_context,
)

__all__ = [
    "Point",
    "RunStateFixture",
    "normalise_outcome",
    "read_fixture",
    "run_state_sha256",
    "write_fixture",
]

Point = Literal[
    "awaiting_tool_result", "awaiting_approval", "mid_plan", "after_compaction", "after_handoff"
]
POINTS: tuple[Point, ...] = get_args(Point)


@dataclass(frozen=True, kw_only=True)
class RunStateFixture:
    adapter: str
    point: Point
    recorded_at: str
    """ISO date of the recording."""
    recorded_with: Mapping[str, str]
    """`framework` ("<pkg> <version>") and `dex_agents_commit`."""
    framework_run_state_sha256: str
    """Of the turn's `framework_run_state` as recorded, so an edited state fails loudly."""
    turn_context: RunnerTurnContext
    model_script: Sequence[Mapping[str, Any]]
    """The next model replies of the resumed run (`ModelScript`'s format)."""
    expected: Mapping[str, Any]
    """`normalise_outcome` of the recorded session's real next action."""


def run_state_sha256(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def _answer_text(outcome: TurnCompleted) -> str | None:
    texts = [m.text for m in outcome.new_messages if m.role == MessageRole.ASSISTANT and m.text]
    return texts[-1] if texts else None


def normalise_outcome(outcome: AgentTurnOutcome) -> dict[str, Any]:
    """The next action without what a framework makes up anew each run (call IDs, usage)."""
    if isinstance(outcome, ToolCallsRequested):
        return {
            "kind": "tool_calls_requested",
            "calls": [
                {"tool_name": call.tool_name, "arguments": json.loads(call.arguments or "{}")}
                for call in outcome.tool_calls
            ],
        }
    if isinstance(outcome, TurnContinued):
        return {"kind": "turn_continued"}
    normalised: dict[str, Any] = {"kind": "turn_completed", "text": _answer_text(outcome)}
    if outcome.turn_error is not None:
        normalised["turn_error"] = outcome.turn_error
    return normalised


def read_fixture(path: Path) -> RunStateFixture:
    data = json.loads(path.read_text())
    point = data["point"]
    if point not in POINTS:
        raise ValueError(f"{path}: unknown point {point!r}")
    return RunStateFixture(
        adapter=data["adapter"],
        point=point,
        recorded_at=data["recorded_at"],
        recorded_with=data["recorded_with"],
        framework_run_state_sha256=data["framework_run_state_sha256"],
        turn_context=decode_runner_turn_context(json.dumps(data["turn_context"])),
        model_script=data["model_script"],
        expected=data["expected"],
    )


def write_fixture(path: Path, fixture: RunStateFixture) -> None:
    data = {
        "adapter": fixture.adapter,
        "point": fixture.point,
        "recorded_at": fixture.recorded_at,
        "recorded_with": dict(fixture.recorded_with),
        "framework_run_state_sha256": fixture.framework_run_state_sha256,
        "turn_context": json.loads(encode_runner_turn_context(fixture.turn_context)),
        "model_script": list(fixture.model_script),
        "expected": dict(fixture.expected),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
