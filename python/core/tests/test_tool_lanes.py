"""Lanes of tool Steps and the proof that a tool never ran, without a server.

Reaches into `dex_agents.session` because both are rules of the session's
internals: which call starts which, and which recovery errors a failure route
may read as "the tool did not run" (the integration side is
tests/test_session_fanout.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pytest
from dex import RecoveryErrorInfo, StepDecision, dead_end, go_to
from dex.step import DecisionKind
from dex_agents import AgentSessionOptions, UserError
from dex_agents.session._rules.tool_started import (
    TOOL_NOT_STARTED_ERROR_TYPE,
    ToolNotStartedError,
    tool_never_ran,
)
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import next_tool_call_key
from dex_agents.session._steps.tools import _before_the_tool
from dex_agents.session._tool_lanes import hand_over, plan_lanes
from dex_agents.worker import DEFAULT_MAX_CONCURRENT_TASKS
from dex_agents_contracts import AgentToolCall, ToolCallStatus, ToolEffect
from helpers import FakeContext
from stepwise_flows import flow


def _runtime(width: int) -> SessionRuntime:
    runtime = flow({"flow_type": "Lanes", "log_path": "/dev/null"})._runtime
    return dataclasses.replace(runtime, options=AgentSessionOptions(max_tool_calls_in_flight=width))


def _call(tool_call_id: str, effect: ToolEffect = ToolEffect.READ) -> AgentToolCall:
    return AgentToolCall(
        tool_call_id=tool_call_id,
        turn_id="turn-3",
        tool_name="t",
        arguments="{}",
        effect=effect,
        status=ToolCallStatus.APPROVED,
        input_allows_free_text=True,
    )


def _targets(decision: StepDecision) -> list[tuple[str, object]]:
    return [(m.step.__name__, m.input) for m in decision.movements]


def test_lanes_start_the_first_calls_and_chain_the_rest() -> None:
    runtime = _runtime(width=2)
    context: Any = FakeContext()
    calls = [_call("a"), _call("b", ToolEffect.NON_IDEMPOTENT_WRITE), _call("c"), _call("d")]
    calls.append(_call("e", ToolEffect.UNCLASSIFIED))
    for call in calls:
        runtime.schema.tool_calls.set(context, call.tool_call_id, call)
    heads = plan_lanes(runtime, context, "turn-3", calls)
    assert [(m.step.__name__, m.input) for m in heads] == [
        ("CallTool", "a"),
        ("CallSingleAttemptTool", "b"),
    ]
    # a -> c -> e and b -> d: each call's tool Step starts the one after it, once.
    first = hand_over(runtime, context, "a", dead_end())
    assert first.kind is DecisionKind.NEXT
    assert _targets(first) == [("CallTool", "c")]
    assert _targets(hand_over(runtime, context, "a", dead_end())) == []
    asked = go_to(runtime.steps.await_question_answer, "b")
    assert _targets(hand_over(runtime, context, "b", asked)) == [
        ("AwaitQuestionAnswer", "b"),
        ("CallTool", "d"),
    ]
    assert _targets(hand_over(runtime, context, "c", dead_end())) == [
        ("CallSingleAttemptTool", "e")
    ]
    for last in ("d", "e"):
        assert hand_over(runtime, context, last, dead_end()).kind is DecisionKind.DEAD_END
    assert runtime.schema.next_tool_calls.get(context, next_tool_call_key("turn-3", "a")) is None


def test_a_narrow_response_needs_no_lanes() -> None:
    runtime = _runtime(width=16)
    context: Any = FakeContext()
    calls = [_call("a"), _call("b")]
    assert [m.input for m in plan_lanes(runtime, context, "turn-3", calls)] == ["a", "b"]
    assert context.values == {}


@dataclass
class _Recovered:
    """Just the recovery error of a failure route's Context."""

    recovery_error: object
    attempt: int = 1


@dataclass(frozen=True)
class Case:
    id: str
    error_type: str
    single_attempt: bool
    never_ran: bool


CASES = (
    Case("a lost stream proves nothing", "UNAVAILABLE", True, False),
    Case("the only attempt found no Worker", "NO_WORKER_AVAILABLE", True, True),
    Case("no Worker knew the Step", "UNKNOWN_STEP", True, True),
    Case(
        "a retried Step's last dispatch says nothing of the others",
        "NO_WORKER_AVAILABLE",
        False,
        False,
    ),
    Case("failed before tool_call_started on attempt 1", TOOL_NOT_STARTED_ERROR_TYPE, False, True),
    Case("a worker error", "builtins.RuntimeError", True, False),
    Case("a server restart", "ServerRestart", True, False),
)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_a_failure_route_reads_not_run_only_from_proof(case: Case) -> None:
    context: Any = _Recovered(RecoveryErrorInfo(detail="d", error_type=case.error_type))
    assert tool_never_ran(context, single_attempt=case.single_attempt) is case.never_ran


def test_a_failure_before_the_tool_is_proof_only_on_the_first_attempt() -> None:
    with pytest.raises(ToolNotStartedError) as first, _before_the_tool(_Recovered(None, attempt=1)):  # type: ignore[arg-type]
        raise KeyError("record")
    assert isinstance(first.value.__cause__, KeyError)
    assert (
        f"{type(first.value).__module__}.{type(first.value).__qualname__}"
        == TOOL_NOT_STARTED_ERROR_TYPE
    )
    with pytest.raises(KeyError), _before_the_tool(_Recovered(None, attempt=2)):  # type: ignore[arg-type]
        raise KeyError("record")


def test_a_sessions_default_bound_is_half_a_default_workers_slots() -> None:
    """The documented relation (python/core/README.md): one response never takes a whole
    default Worker, whose slots (less the one the SDK keeps for RPCs) serve every session."""
    assert AgentSessionOptions().max_tool_calls_in_flight == DEFAULT_MAX_CONCURRENT_TASKS // 2
    with pytest.raises(UserError):
        AgentSessionOptions(max_tool_calls_in_flight=0)
