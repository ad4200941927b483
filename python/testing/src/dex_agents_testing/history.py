"""Step shapes from a Flow's history, read by `dex_agents.history`.

A turn's shape is the Step types whose Execute completed, in commit order,
between the Steps that start turns (StartAgentSession and AwaitUserMessage).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from dex.dexpb import dex_pb2 as pb
from dex_agents.history import (
    TURN_START_STEPS,
    ExecutedStep,
    executed_steps,
    fetch_history,
    step_types,
    turn_shapes,
)

__all__ = [
    "TURN_START_STEPS",
    "ExecutedStep",
    "assert_step_shape",
    "executed_steps",
    "fetch_history",
    "step_types",
    "turn_shapes",
]

ShapeItem = str | tuple[str, ...] | frozenset[str] | set[str]
"""A Step type, or a group of Step types that run in parallel, in any order.

Write a group with repeated types as a tuple: `("CallTool", "CallTool")`."""


def _matches(shape: Sequence[str], expected: Sequence[ShapeItem]) -> bool:
    position = 0
    for item in expected:
        if isinstance(item, str):
            if position >= len(shape) or shape[position] != item:
                return False
            position += 1
        else:
            group = shape[position : position + len(item)]
            if Counter(group) != Counter(item):
                return False
            position += len(item)
    return position == len(shape)


def assert_step_shape(
    history: Sequence[pb.FlowHistoryEvent] | Sequence[str],
    expected: Sequence[ShapeItem],
    *,
    turn: int | None = 0,
) -> None:
    """Asserts the Step shape of one turn (or, with `turn=None`, of the given Step types).

    `expected` lists Step types; a set stands for parallel Steps in any order,
    e.g. `["RunModel", ("CallTool", "AwaitToolApproval"), "ResumeTurn", "RunModel"]`.
    """
    if history and isinstance(history[0], str):
        shape = [str(s) for s in history]
    else:
        events = [e for e in history if isinstance(e, pb.FlowHistoryEvent)]
        shapes = turn_shapes(events)
        if turn is None:
            shape = step_types(events)
        else:
            assert turn < len(shapes), f"no turn {turn} in history; turns: {shapes}"
            shape = shapes[turn]
    assert _matches(shape, expected), f"Step shape {shape} does not match {list(expected)}"
