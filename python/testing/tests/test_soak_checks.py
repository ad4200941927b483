"""The soak's invariant checks catch what they claim to, on hand-made stored states.

The soak itself passes only when nothing breaks, which proves nothing about the
checks; these feed them a session that is right, then the same session with one
thing wrong at a time.
"""

from __future__ import annotations

import json
from pathlib import Path

from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentMessage, AgentSnapshot, AgentState, AgentStatus, AgentUsage
from dex_agents_contracts import MessageRole as Role
from dex_agents_testing.soak.agent import effect_path
from dex_agents_testing.soak.driver import SessionResult, TurnRecord
from dex_agents_testing.soak.figures import percentile
from dex_agents_testing.soak.invariants import check_session, stray_effects
from dex_agents_testing.soak.plans import TurnPlan, calls_for, parse_plan

SID = "soak-001"


def _message(seq: int, role: Role, call: int, **fields: str) -> AgentMessage:
    return AgentMessage(
        sequence=seq,
        turn_id="turn-1",
        role=role,
        framework_item=json.dumps({"call": call}),
        **fields,  # type: ignore[arg-type]
    )


def _approved_turn(tmp_path: Path) -> tuple[SessionResult, AgentSnapshot, list[AgentMessage]]:
    plan = TurnPlan(kind="approve", tag=f"{SID}.1")
    result = SessionResult(SID, sent=[plan.message()], expected_turns=1)
    result.turns.append(TurnRecord(plan, turn_id="turn-1", resolution="approved"))
    messages = [
        AgentMessage(sequence=1, turn_id="turn-1", role=Role.USER, text=plan.message()),
        _message(2, Role.ASSISTANT, 0, tool_call_id="a1", tool_name="transfer"),
        _message(3, Role.TOOL, 0, tool_call_id="a1", tool_name="transfer", tool_output="sent"),
        _message(4, Role.ASSISTANT, 1, text=plan.final_text()),
    ]
    snapshot = AgentSnapshot(
        state=AgentState(status=AgentStatus.WAITING_FOR_USER_MESSAGE, turn_count=1),
        usage=AgentUsage(model_calls=2, input_tokens=20, output_tokens=10),
    )
    key = {"key": f"{SID}/turn-1/a1", "attempt": 1}
    effect_path(tmp_path, SID, "turn-1", "a1").write_text(json.dumps(key) + "\n")
    return result, snapshot, messages


def _invariants(
    tmp_path: Path, result: SessionResult, snapshot: AgentSnapshot, messages: list[AgentMessage]
) -> list[str]:
    return sorted({v.invariant for v in check_session(result, snapshot, messages, tmp_path)})


def test_a_sound_session_passes(tmp_path: Path) -> None:
    result, snapshot, messages = _approved_turn(tmp_path)
    assert check_session(result, snapshot, messages, tmp_path) == []
    assert stray_effects([result], tmp_path) == []


def test_a_single_attempt_body_that_ran_twice_is_caught(tmp_path: Path) -> None:
    result, snapshot, messages = _approved_turn(tmp_path)
    path = effect_path(tmp_path, SID, "turn-1", "a1")
    path.write_text(path.read_text() * 2)
    assert "no single-attempt tool body ran twice" in _invariants(
        tmp_path, result, snapshot, messages
    )


def test_a_lost_approval_is_caught(tmp_path: Path) -> None:
    result, snapshot, messages = _approved_turn(tmp_path)
    messages[2] = _message(
        3,
        Role.TOOL,
        0,
        tool_call_id="a1",
        tool_name="transfer",
        tool_output="The user rejected this tool call.",
    )
    effect_path(tmp_path, SID, "turn-1", "a1").unlink()
    assert _invariants(tmp_path, result, snapshot, messages) == ["no interrupt lost"]


def test_a_doubled_message_a_second_result_and_wrong_usage_are_caught(tmp_path: Path) -> None:
    result, snapshot, messages = _approved_turn(tmp_path)
    doubled = AgentMessage(sequence=5, turn_id="turn-1", role=Role.USER, text=result.sent[0])
    second = _message(6, Role.TOOL, 0, tool_call_id="a1", tool_name="transfer", tool_output="sent")
    assert snapshot.usage is not None
    snapshot.usage.model_calls = 3
    assert _invariants(tmp_path, result, snapshot, [*messages, doubled, second]) == [
        "every message exactly once and in order",
        "every tool call has exactly one final record",
        "usage sums match",
    ]


def test_an_unended_turn_and_a_stray_side_effect_are_caught(tmp_path: Path) -> None:
    result, snapshot, messages = _approved_turn(tmp_path)
    assert snapshot.state is not None
    snapshot.state.active_turn_id = "turn-2"
    effect_path(tmp_path, SID, "turn-9", "c1").write_text("{}\n")
    assert _invariants(tmp_path, result, snapshot, messages) == ["every turn ended"]
    assert [v.detail for v in stray_effects([result], tmp_path)] == [f"{SID}__turn-9__c1.log"]


def _tool_turn(
    kind: str, outputs: dict[str, str]
) -> tuple[SessionResult, AgentSnapshot, list[AgentMessage]]:
    """One ended turn of plan `kind` whose calls got `outputs` (by tool call ID)."""
    plan = TurnPlan(kind=kind, tag=f"{SID}.1")
    result = SessionResult(SID, sent=[plan.message()], expected_turns=1)
    result.turns.append(TurnRecord(plan, turn_id="turn-1"))
    messages = [AgentMessage(sequence=1, turn_id="turn-1", role=Role.USER, text=plan.message())]
    for call in calls_for(plan, 0):
        ids = {"tool_call_id": call.tool_call_id, "tool_name": call.tool_name}
        messages.append(_message(len(messages) + 1, Role.ASSISTANT, 0, **ids))
        messages.append(
            _message(len(messages) + 1, Role.TOOL, 0, **ids, tool_output=outputs[call.tool_call_id])
        )
    messages.append(_message(len(messages) + 1, Role.ASSISTANT, 1, text=plan.final_text()))
    snapshot = AgentSnapshot(
        state=AgentState(status=AgentStatus.WAITING_FOR_USER_MESSAGE, turn_count=1),
        usage=AgentUsage(model_calls=2, input_tokens=20, output_tokens=10),
    )
    return result, snapshot, messages


def test_idempotent_writes_must_keep_one_key(tmp_path: Path) -> None:
    result, snapshot, messages = _tool_turn(
        "tools", {"r1": "found", "w1": "upserted", "c1": "charged"}
    )
    effect_path(tmp_path, SID, "turn-1", "c1").write_text('{"key":"x"}\n')
    keys = [f"{SID}/turn-1/w1", f"{SID}/turn-2/w1"]
    effect_path(tmp_path, SID, "turn-1", "w1").write_text(
        "".join(json.dumps({"key": k}) + "\n" for k in keys)
    )
    assert _invariants(tmp_path, result, snapshot, messages) == ["one idempotency key per call"]


def test_plans_round_trip_and_percentiles() -> None:
    plan = TurnPlan(kind="steer", tag="soak-003.2")
    assert parse_plan(plan.message()) == plan
    assert parse_plan("hello") is None
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([float(n) for n in range(1, 101)], 0.99) == 99.0
    assert percentile([], 0.5) == 0.0


def _fail_turn(
    tmp_path: Path, f1_output: str, x1_runs: int
) -> tuple[SessionResult, AgentSnapshot, list[AgentMessage]]:
    """A `fail` turn: a read that failed for good and a single-attempt call of unknown outcome."""
    result, snapshot, messages = _tool_turn("fail", {"f1": f1_output, "x1": OUTCOME_UNKNOWN_RESULT})
    line = json.dumps({"key": f"{SID}/turn-1/x1", "attempt": 1}) + "\n"
    effect_path(tmp_path, SID, "turn-1", "x1").write_text(line * x1_runs)
    return result, snapshot, messages


def test_failure_route_turns_are_checked(tmp_path: Path) -> None:
    failed = "The tool call failed: fetch fails on every attempt (soak workload)"
    assert _invariants(tmp_path, *_fail_turn(tmp_path, failed, 1)) == []
    assert _invariants(tmp_path, *_fail_turn(tmp_path, "found", 1)) == ["tool results as planned"]
    assert _invariants(tmp_path, *_fail_turn(tmp_path, failed, 2)) == [
        "no single-attempt tool body ran twice"
    ]
