"""durable_wait: AwaitTimer completes, ends by SkipTimer, and survives a dexlite restart."""

from __future__ import annotations

import json
from typing import Any

from dex import StepExecutionId, TimerId
from dex_agents.session._rules.turn_control import SUPERSEDED_BY_STEER_RESULT, TURN_CANCELLED_RESULT
from dex_agents.session._steps.timer import durable_wait_result
from dex_agents.session._time import utc_now
from dex_agents_contracts import AgentSnapshot, AgentToolCall, ToolCallStatus
from dex_agents_testing import (
    ModelReply,
    ScriptedToolCall,
    assert_step_shape,
    step_types,
    wait_until,
)
from helpers import Harness, HarnessFactory

WAIT_SHAPE = ["RunModel", "AwaitTimer", "ResumeTurn", "RunModel"]


def _wait(seconds: object, reason: str = "cool down", tool_call_id: str = "d1") -> ModelReply:
    return ModelReply(
        tool_calls=[
            ScriptedToolCall(
                tool_call_id=tool_call_id,
                tool_name="durable_wait",
                arguments={"seconds": seconds, "reason": reason},
            )
        ]
    )


def _waiting(h: Harness, session: str) -> AgentSnapshot:
    return h.wait_snapshot(
        session,
        lambda s: any(t.status is ToolCallStatus.WAITING_FOR_TIMER for t in s.tool_calls),
        what="the durable wait",
    )


def _completed(seconds: int, reason: str) -> str:
    return json.dumps(
        {"status": "completed", "waited_seconds": seconds, "reason": reason},
        separators=(",", ":"),
    )


def _timer_execution(h: Harness, session: str) -> StepExecutionId:
    """The AwaitTimer execution whose WaitFor is registered (it waits on its Timer)."""

    def find() -> str | None:
        for event in h.history(session):
            if event.WhichOneof("payload") == "step_wait_for_completed":
                context = event.step_wait_for_completed.context
                if context.step_type == "AwaitTimer":
                    return str(context.step_execution_id)
        return None

    execution_id = wait_until(find, what="AwaitTimer's wait")
    step_type, number = execution_id.rsplit("-", 1)
    return StepExecutionId(step_type=step_type, number=int(number))


def test_durable_wait_completes_with_its_result(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_wait(1, "let the cache warm"), ModelReply(text="warm now")]],
        built_in_tools=("durable_wait",),
    )
    session = h.start("wait a second")
    done = h.wait_idle(session, 1)
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"d1": _completed(1, "let the cache warm")}
    assert done.messages[-1].text == "warm now"
    events = [e for e in h.events(session, "turn_completed") if e.type == "timer_started"]
    (started,) = [json.loads(e.payload) for e in events]
    assert set(started) == {"tool_call_id", "wait_until", "reason"}
    assert (started["tool_call_id"], started["reason"]) == ("d1", "let the cache warm")
    assert started["wait_until"].endswith("Z")
    assert_step_shape(h.history(session), WAIT_SHAPE)


def test_skip_timer_ends_a_long_wait(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_wait(3600, "the nightly job"), ModelReply(text="done")]],
        built_in_tools=("durable_wait",),
    )
    session = h.start("wait an hour")
    waiting = _waiting(h, session)
    (record,) = waiting.tool_calls
    assert record.wait_until is not None
    assert 3590 < (record.wait_until - utc_now()).total_seconds() <= 3600
    h.client.client.skip_timer(session, _timer_execution(h, session), TimerId(condition_index=0))
    h.wait_idle(session, 1)
    (resumed,) = h.log.entries("model", call=1)
    # The Timer is the authority: the wait completed as asked.
    assert resumed["tool_results"] == {"d1": _completed(3600, "the nightly job")}
    assert_step_shape(h.history(session), WAIT_SHAPE)


def test_durable_wait_survives_a_dexlite_restart(private_harness: HarnessFactory) -> None:
    h = private_harness(
        script=[[_wait(2, "restart"), ModelReply(text="done")]],
        built_in_tools=("durable_wait",),
    )
    session = h.start("wait")
    (record,) = _waiting(h, session).tool_calls
    _timer_execution(h, session)  # the Timer is registered
    h.worker.kill()
    h.server.kill()
    until = record.wait_until
    assert until is not None
    # The Timer falls due while nothing runs; the restarted server fires it.
    wait_until(lambda: utc_now() > until, timeout=10, what="wait_until to pass")
    h.server.start()
    h.worker = h._new_worker().start()
    h.wait_idle(session, 1, timeout=60)
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"d1": _completed(2, "restart")}
    assert_step_shape(h.history(session), WAIT_SHAPE)


def test_durable_wait_longer_than_max_durable_wait_fails(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_wait(61), ModelReply(text="too long")]],
        built_in_tools=("durable_wait",),
        max_durable_wait_seconds=60,
    )
    session = h.start("wait")
    h.wait_idle(session, 1)
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "d1": "The tool call failed: invalid durable_wait arguments: seconds must be at most 60"
    }
    assert_step_shape(h.history(session), ["RunModel", "ResumeTurn", "RunModel"])


def test_durable_wait_result_reads_the_validated_arguments() -> None:
    def record(arguments: Any) -> AgentToolCall:
        return AgentToolCall(tool_call_id="d1", arguments=json.dumps(arguments))

    assert durable_wait_result(record({"seconds": 5.0, "reason": "é"})) == (
        '{"status":"completed","waited_seconds":5,"reason":"é"}'
    )


def _tool_outputs(snapshot: AgentSnapshot, tool_call_id: str) -> list[str]:
    return [
        m.tool_output
        for m in snapshot.messages
        if m.tool_call_id == tool_call_id and m.tool_output is not None
    ]


def test_steer_abandons_a_durable_wait(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_wait(3600)], [ModelReply(text="changed course")]],
        built_in_tools=("durable_wait",),
    )
    session = h.start("wait an hour")
    _waiting(h, session)
    assert h.client.steer_user_message(session, text="don't wait")
    done = h.wait_idle(session, 2)
    assert _tool_outputs(done, "d1") == [SUPERSEDED_BY_STEER_RESULT]
    assert done.messages[-1].text == "changed course"
    types = step_types(h.history(session))
    assert types.count("AwaitTimer") == 1


def test_cancel_turn_abandons_a_durable_wait(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_wait(3600)], [ModelReply(text="ok")]],
        built_in_tools=("durable_wait",),
    )
    session = h.start("wait an hour")
    _waiting(h, session)
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)
    assert _tool_outputs(done, "d1") == [TURN_CANCELLED_RESULT]
    types = [e.type for e in h.events(session, "turn_cancelled")]
    assert "turn_cancelled" in types
