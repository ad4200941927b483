"""Step shapes from a Flow's history (GetHistoryEvents through the raw gRPC stub).

SDK 1.23.0 has no history API, so this reads `dex.dexpb` directly. A turn's
shape is the Step types whose Execute completed, in commit order, between the
Steps that start turns (StartAgentSession and AwaitUserMessage).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc

__all__ = [
    "TURN_START_STEPS",
    "ExecutedStep",
    "assert_step_shape",
    "executed_steps",
    "fetch_history",
    "step_types",
    "turn_shapes",
]

TURN_START_STEPS = frozenset({"StartAgentSession", "AwaitUserMessage", "ApplyTurnControl"})

ShapeItem = str | tuple[str, ...] | frozenset[str] | set[str]
"""A Step type, or a group of Step types that run in parallel, in any order.

Write a group with repeated types as a tuple: `("CallTool", "CallTool")`."""


@dataclass(frozen=True)
class ExecutedStep:
    step_type: str
    step_execution_id: str
    from_step_execution_id: str
    attempt: int
    failed: bool


def fetch_history(address: str, flow_id: str, run_id: str) -> list[pb.FlowHistoryEvent]:
    """Every history event of one run, in event order."""
    events: list[pb.FlowHistoryEvent] = []
    token = b""
    with grpc.insecure_channel(address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        while True:
            request = pb.GetHistoryEventsRequest(
                flow_id=flow_id, run_id=run_id, estimate_page_size=500
            )
            if token:
                request.next_page_token = token
            response = stub.GetHistoryEvents(request, timeout=30)
            events.extend(response.events)
            token = response.next_page_token
            if not token:
                return events


def executed_steps(history: Sequence[pb.FlowHistoryEvent]) -> list[ExecutedStep]:
    """Steps whose Execute completed or finally failed, in event order."""
    steps: list[ExecutedStep] = []
    for event in history:
        kind = event.WhichOneof("payload")
        if kind not in ("step_execute_completed", "step_execute_failed"):
            continue
        context = getattr(event, kind).context
        steps.append(
            ExecutedStep(
                step_type=context.step_type,
                step_execution_id=context.step_execution_id,
                from_step_execution_id=context.from_step_execution_id,
                attempt=context.final_attempt,
                failed=kind == "step_execute_failed",
            )
        )
    return steps


def step_types(history: Sequence[pb.FlowHistoryEvent]) -> list[str]:
    """Step types whose Execute completed, in commit order."""
    return [s.step_type for s in executed_steps(history) if not s.failed]


def turn_shapes(history: Sequence[pb.FlowHistoryEvent]) -> list[list[str]]:
    """Per turn, the Step types after the Step that started it."""
    shapes: list[list[str]] = []
    current: list[str] | None = None
    for step_type in step_types(history):
        if step_type in TURN_START_STEPS:
            current = []
            shapes.append(current)
        elif current is not None:
            current.append(step_type)
    return [shape for shape in shapes if shape]


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
