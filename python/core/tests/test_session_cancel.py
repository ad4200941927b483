"""cancel_turn: a running model call, waiting approvals beside running tools, a steer
and a cancel together, and the RPC's false cases."""

from __future__ import annotations

from pathlib import Path

from control_flows import scripted_config
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents.session._rules.turn_control import CANCELLED_NOTE_HEADER, TURN_CANCELLED_RESULT
from dex_agents_contracts import AgentSnapshot, AgentStatus, MessageRole, ToolEffect
from dex_agents_testing import (
    ModelReply,
    RunLog,
    ScriptedPoll,
    ScriptedRunner,
    ScriptedTask,
    ScriptedTool,
    ScriptedToolCall,
    step_types,
    wait_until,
)
from helpers import Harness, HarnessFactory

SEND = ScriptedTool(name="send_email", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


def _calls(*pairs: tuple[str, str]) -> ModelReply:
    return ModelReply(tool_calls=[ScriptedToolCall(tool_call_id=i, tool_name=n) for i, n in pairs])


def _user_texts(snapshot: AgentSnapshot) -> list[str | None]:
    return [m.text for m in snapshot.messages if m.role is MessageRole.USER]


def _event_types(h: Harness, session: str, until: str, count: int = 1) -> list[str]:
    return [e.type for e in h.events(session, until, count=count)]


def test_cancel_turn_cancels_a_running_model_call(
    factory_harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "never-opened-before-cancel"
    h = factory_harness("control_flows:continuing_flow", {"gate": str(gate)})
    session = h.start("long question")
    wait_until(lambda: h.log.count("model") == 1, what="the model call to start")
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)

    wait_until(lambda: h.log.count("model_cancelled") == 1, what="the coroutine to be cancelled")
    gate.touch()  # too late: the call's result is dropped, nothing runs again
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert _user_texts(done) == ["long question"]
    assert [m.role for m in done.messages] == [MessageRole.USER]  # no answer, no note
    types = _event_types(h, session, "turn_cancelled")
    assert types[-1] == "turn_cancelled"
    assert not h.client.cancel_turn(session)  # no active turn any more
    assert h.client.send_user_message(session, "next")
    after = h.wait_idle(session, 2)
    assert after.messages[-1].text == "answer to next"
    assert h.log.count("model", turn="turn-1") == 1  # the cancelled call never reran
    steps = step_types(h.history(session))
    assert steps[steps.index("FinishTurnCancellation") + 1] == "ApplyTurnControl"


def test_cancel_turn_rejects_waiting_approval_and_lets_a_started_tool_finish(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "read"
    h = harness(
        script=[[_calls(("r1", "slow_read"), ("w1", "send_email"))], [ModelReply(text="n/a")]],
        tools=[
            ScriptedTool(name="slow_read", effect=ToolEffect.READ, output="r", gate=str(gate)),
            SEND,
        ],
    )
    session = h.start("read and send")
    h.wait_snapshot(
        session,
        lambda s: bool(s.pending_interrupts) and h.log.count("tool", name="slow_read") == 1,
        what="the approval beside a running read",
    )
    assert h.client.cancel_turn(session)
    assert h.client.cancel_turn(session)  # already cancelled: true, nothing changes
    held = h.wait_snapshot(
        session, lambda s: not s.pending_interrupts, what="the interrupt to be removed"
    )
    assert held.state is not None
    assert held.state.status is AgentStatus.RUNNING_TOOLS  # the read still runs
    assert not h.client.resolve_interrupt(session, "w1", approved=True)
    gate.touch()
    done = h.wait_idle(session, 1)

    assert h.log.count("tool", name="send_email") == 0
    assert h.log.count("tool", name="slow_read") == 1
    assert h.log.count("model") == 1  # no model call after the cancel
    tool_outputs = {m.tool_call_id: m.tool_output for m in done.messages if m.tool_output}
    assert tool_outputs == {"r1": "r", "w1": TURN_CANCELLED_RESULT}
    events = h.events(session, "turn_cancelled")
    (resolved,) = [e for e in events if e.type == "interrupt_resolved"]
    assert '"cancellation_reason":"turn_cancelled"' in resolved.payload
    assert events[-1].type == "turn_cancelled"


def test_a_steered_and_cancelled_turn_ends_cancelled_and_the_steer_starts_the_next(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "read"
    h = harness(
        script=[[_calls(("r1", "slow_read"))], [ModelReply(text="on to the next")]],
        tools=[ScriptedTool(name="slow_read", output="r", gate=str(gate))],
    )
    session = h.start("first")
    wait_until(lambda: h.log.count("tool") == 1, what="the read to start")
    assert h.client.steer_user_message(session, text="second")
    assert h.client.cancel_turn(session, "turn-1")
    gate.touch()
    done = h.wait_idle(session, 2)

    assert _user_texts(done) == ["first", "second"]
    assert done.messages[-1].text == "on to the next"
    types = _event_types(h, session, "turn_completed")
    assert "turn_cancelled" in types
    assert "turn_steered" not in types


def test_cancel_turn_refuses_other_turns_and_idle_sessions(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "model"
    h = harness(script=[[ModelReply(text="a", gate=str(gate))]])
    session = h.start()
    h.wait_snapshot(session, lambda s: s.state is not None, what="the session to start")
    assert not h.client.cancel_turn(session)  # nothing to cancel
    assert h.client.send_user_message(session, "hi")
    wait_until(lambda: h.log.count("model") == 1, what="the model call")
    assert not h.client.cancel_turn(session, "turn-7")  # another turn
    gate.touch()
    done = h.wait_idle(session, 1)
    assert done.messages[-1].text == "a"
    assert not h.client.cancel_turn(session, "turn-1")  # it already ended


def test_a_turn_cancelled_without_unfinished_messages_stores_the_cancelled_note(
    factory_harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "read"
    scripted = ScriptedRunner(
        [[_calls(("r1", "slow_read"), ("w1", "send_email"))]],
        [ScriptedTool(name="slow_read", output="r", gate=str(gate)), SEND],
        RunLog(str(tmp_path / "unused.jsonl")),
    )
    h = factory_harness("control_flows:note_only_flow", scripted_config(scripted))
    session = h.start("read and send")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    assert h.client.cancel_turn(session)
    gate.touch()
    done = h.wait_idle(session, 1)
    assert done.messages[-1].text == (
        f"{CANCELLED_NOTE_HEADER}\n"
        "- slow_read {} -> succeeded: r\n"
        f"- send_email {{}} -> rejected: {TURN_CANCELLED_RESULT}\n"
        "Do not repeat these tool calls unless the user asks again."
    )


def test_turns_a_pre_steering_worker_started_refuse_steer_and_cancel(
    factory_harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "model"
    h = factory_harness("control_flows:earlier_worker_flow", {"gate": str(gate)})
    session = h.start("question")
    wait_until(lambda: h.log.count("model") == 1, what="the model call to start")
    held = h.snapshot(session)
    assert held.state is not None
    assert held.state.accepts_turn_control is False
    assert not h.client.cancel_turn(session)
    assert not h.client.steer_user_message(session, text="other")
    gate.touch()
    done = h.wait_idle(session, 1)
    assert _user_texts(done) == ["question"]
    assert done.steered_messages == []


def test_cancel_turn_during_a_parallel_approval_and_tool_task(harness: HarnessFactory) -> None:
    report = ScriptedTool(
        name="report",
        task=ScriptedTask(polls=(ScriptedPoll(kind="pending", poll_interval_seconds=3600),)),
    )
    h = harness(
        script=[[_calls(("w1", "send_email"), ("t1", "report"))], [ModelReply(text="n/a")]],
        tools=[SEND, report],
        task_runner=True,
    )
    session = h.start("send and report")
    h.wait_snapshot(
        session,
        lambda s: bool(s.pending_interrupts) and h.log.count("poll") == 1,
        what="the approval beside a polled task",
    )
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)

    assert h.log.count("tool", name="send_email") == 0
    assert h.log.count("task_start") == 1
    (cancelled,) = h.log.entries("cancel_task")
    assert cancelled["task_id"] == "task-t1-1"
    outputs = {m.tool_call_id: m.tool_output for m in done.messages if m.tool_output}
    assert outputs == {"w1": TURN_CANCELLED_RESULT, "t1": OUTCOME_UNKNOWN_RESULT}
    steps = step_types(h.history(session))
    after_cancel = steps[steps.index("FinishTurnCancellation") :]
    assert after_cancel == [
        "FinishTurnCancellation",
        "CancelToolTask",
        "ResumeTurn",
        "ApplyTurnControl",
    ]
    assert _event_types(h, session, "turn_cancelled")[-1] == "turn_cancelled"
