"""A session's Flow history: every Step's commit, read back from Dex.

SDK 1.23.0 has no history API, so this reads `dex.dexpb` through the raw gRPC
stub. `dex-agents inspect` draws its timeline from these events, and the tests
assert Step shapes on them (`dex_agents_testing.history`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc

__all__ = [
    "TURN_START_STEPS",
    "ExecutedStep",
    "active_steps",
    "executed_steps",
    "fetch_history",
    "step_types",
    "turn_shapes",
]

TURN_START_STEPS = frozenset({"StartAgentSession", "AwaitUserMessage", "ApplyTurnControl"})
"""Steps whose Execute starts a turn (or, for ApplyTurnControl, the steered one)."""


@dataclass(frozen=True)
class ExecutedStep:
    step_type: str
    step_execution_id: str
    from_step_execution_id: str
    attempt: int
    failed: bool


def fetch_history(
    address: str, flow_id: str, run_id: str, *, timeout: float = 30.0
) -> list[pb.FlowHistoryEvent]:
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
            response = stub.GetHistoryEvents(request, timeout=timeout)
            events.extend(response.events)
            token = response.next_page_token
            if not token:
                return events


def active_steps(
    address: str, flow_id: str, run_id: str, *, timeout: float = 30.0
) -> list[pb.ActiveStepExecutionState]:
    """The Step executions that run or wait now (GetFlowState), which history shows only
    once they commit."""
    with grpc.insecure_channel(address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        response = stub.GetFlowState(
            pb.GetFlowStateRequest(flow_id=flow_id, run_id=run_id), timeout=timeout
        )
    return list(response.active_step_executions)


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
