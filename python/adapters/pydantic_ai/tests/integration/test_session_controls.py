"""Built-in tools, steering and cancel_turn with PydanticAiRunner on dexlite.

The agent of `pai_controls_app.py` runs on a Worker child process with every
built-in enabled; a gate file holds its model call where a test steers or
cancels. Step shapes come from the Flow's history.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from dex import StepExecutionId, TimerId
from dex_agents_contracts import (
    AgentSnapshot,
    InterruptKind,
    MessageRole,
    PlanStatus,
    PlanTaskStatus,
    ToolCallStatus,
)
from dex_agents_testing import DexliteProcess, assert_step_shape, step_types, wait_until

from integration.pai_workers import App

CONTROLS_APP = Path(__file__).resolve().parent / "pai_controls_app.py"
BUILT_INS = ["ask_user", "durable_wait", "write_todos"]
# The design document's rejection message for a call that a steer abandoned.
SUPERSEDED_BY_STEER = '{"status":"cancelled","reason":"superseded_by_steered_user_message"}'


@pytest.fixture(scope="module")
def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
    server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
    yield server
    server.stop()


@pytest.fixture
def app(dexlite: DexliteProcess, tmp_path: Path) -> Iterator[App]:
    made = App(dexlite, tmp_path, script=CONTROLS_APP)
    made.start_worker()
    yield made
    made.stop()


def _record(snapshot: AgentSnapshot, tool_call_id: str, status: ToolCallStatus) -> bool:
    return any(r.tool_call_id == tool_call_id and r.status is status for r in snapshot.tool_calls)


def _user_texts(snapshot: AgentSnapshot) -> list[str | None]:
    return [m.text for m in snapshot.messages if m.role is MessageRole.USER]


def _payloads(app: App, session: str, event_type: str, until: str) -> list[dict[str, object]]:
    events = app.events(session, until)
    return [json.loads(e.payload) for e in events if e.type == event_type]


def _wait_for_held_model_call(app: App, prompt: str) -> None:
    wait_until(
        lambda: any(e["prompts"][-1:] == [prompt] for e in app.entries("model")),
        what=f"the model call for {prompt!r} to start",
    )


def test_ask_user_is_answered_and_the_next_model_call_sees_the_answer(app: App) -> None:
    session = app.start("ask me")
    waiting = app.wait(
        session,
        "the ask_user question",
        lambda s: _record(s, "q1", ToolCallStatus.AWAITING_ANSWER),
    )
    (interrupt,) = waiting.pending_interrupts
    assert (interrupt.interrupt_id, interrupt.kind, interrupt.tool_name) == (
        "q1",
        InterruptKind.QUESTION,
        "ask_user",
    )
    assert interrupt.question == "Which city?"
    assert app.client.answer_question(session, "q1", "Lisbon")
    assert not app.client.answer_question(session, "q1", "Porto")  # no longer pending
    done = app.wait_idle(session, 1)

    answered = '{"status":"answered","answer":"Lisbon"}'
    first, second = app.entries("model")
    # The model was offered the built-ins next to the agent's own tool, and ran none.
    assert first["tools"] == ["lookup", *BUILT_INS]
    assert second["results"] == {"q1": answered}
    assert done.messages[-1].text == f"Results: ask_user={answered}"
    assert [(m.role, m.tool_name) for m in done.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "ask_user"),
        (MessageRole.TOOL, "ask_user"),
        (MessageRole.ASSISTANT, None),
    ]
    assert_step_shape(
        app.history(session), ["RunModel", "AwaitQuestionAnswer", "ResumeTurn", "RunModel"]
    )


def test_durable_wait_ended_by_skip_timer_reaches_the_model(app: App) -> None:
    session = app.start("wait a bit")
    app.wait(
        session, "the durable wait", lambda s: _record(s, "t1", ToolCallStatus.WAITING_FOR_TIMER)
    )

    def skip() -> bool:
        # The Timer exists once AwaitTimer's WaitFor ran; dexlite refuses it until then.
        try:
            app.client.client.skip_timer(
                session, StepExecutionId("AwaitTimer", 1), TimerId(condition_index=0)
            )
        except Exception:
            return False
        return True

    wait_until(skip, what="the durable wait's Timer to be skipped")
    done = app.wait_idle(session, 1)

    completed = '{"status":"completed","waited_seconds":3600,"reason":"cool down"}'
    assert app.entries("model")[-1]["results"] == {"t1": completed}
    assert done.messages[-1].text == f"Results: durable_wait={completed}"
    (started,) = _payloads(app, session, "timer_started", "turn_completed")
    assert (started["tool_call_id"], started["reason"]) == ("t1", "cool down")
    assert_step_shape(app.history(session), ["RunModel", "AwaitTimer", "ResumeTurn", "RunModel"])


def test_write_todos_updates_the_plan(app: App) -> None:
    session = app.start("plan the trip")
    done = app.wait_idle(session, 1)

    assert done.plan is not None
    assert (done.plan.revision, done.plan.status) == (1, PlanStatus.ACTIVE)
    assert [(t.content, t.status) for t in done.plan.tasks] == [
        ("pack", PlanTaskStatus.COMPLETED),
        ("travel", PlanTaskStatus.IN_PROGRESS),
    ]
    updated = '{"status":"updated","revision":1,"task_count":2}'
    assert app.entries("model")[-1]["results"] == {"p1": updated}
    assert done.messages[-1].text == f"Results: write_todos={updated}"
    # Settled in RunModel's own commit: no tool Step.
    assert_step_shape(app.history(session), ["RunModel", "ResumeTurn", "RunModel"])


def test_steer_during_a_held_model_call_abandons_its_tool_and_starts_the_next_turn(
    app: App,
) -> None:
    session = app.start("hold on")
    _wait_for_held_model_call(app, "hold on")
    assert app.client.steer_user_message(session, text="instead, say hi")
    steered = app.client.get_snapshot(session).steered_messages
    assert [p.message.text for p in steered if p.message is not None] == ["instead, say hi"]
    app.gate("hold").touch()  # the call now asks for `lookup`, after the steer committed
    done = app.wait_idle(session, 2)

    assert app.entries("tool") == []  # the requested tool never ran
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert _user_texts(done) == ["hold on", "instead, say hi"]
    # The steered turn's model call saw the first turn's call, abandoned, and the steer.
    resumed = app.entries("model")[-1]
    assert resumed["prompts"] == ["hold on", "instead, say hi"]
    assert resumed["results"] == {"l1": SUPERSEDED_BY_STEER}
    assert done.messages[-1].text == "Prompts: hold on|instead, say hi"
    assert [(m.role, m.tool_call_id) for m in done.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "l1"),
        (MessageRole.TOOL, "l1"),
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, None),
    ]
    assert done.messages[2].tool_output == SUPERSEDED_BY_STEER
    types = [e.type for e in app.events(session, "turn_completed")]
    assert types.count("turn_steered") == 1
    assert types.index("turn_steered") < types.index("turn_completed")
    executed = step_types(app.history(session))
    # A control wake that lands before the call's result makes ResumeTurn wait once more.
    steps = [t for i, t in enumerate(executed) if not (t == "ResumeTurn" == executed[i - 1])]
    assert steps == [
        "StartAgentSession",
        "RunModel",
        "CallTool",  # records the call cancelled before it starts
        "ResumeTurn",
        "ApplyTurnControl",
        "RunModel",
    ]


def test_cancel_turn_cancels_the_held_model_call(app: App) -> None:
    session = app.start("hold please")
    _wait_for_held_model_call(app, "hold please")
    assert app.client.cancel_turn(session)
    done = app.wait_idle(session, 1)
    # Pydantic AI's await of the model call was cancelled inside the Step's coroutine.
    wait_until(
        lambda: len(app.entries("model_cancelled")) == 1, what="the model call to be cancelled"
    )
    app.gate("hold").touch()  # too late: nothing of the call remains to continue

    assert done.state is not None
    assert done.state.last_turn_error is None
    assert [(m.role, m.text) for m in done.messages] == [(MessageRole.USER, "hold please")]
    assert done.tool_calls == []
    assert _payloads(app, session, "turn_cancelled", "turn_cancelled") == [{"message_count": 0}]
    assert not app.client.cancel_turn(session)  # no active turn any more

    assert app.client.send_user_message(session, "next")
    after = app.wait_idle(session, 2)
    assert after.messages[-1].text == "Prompts: hold please|next"
    assert len(app.entries("model")) == 2  # the cancelled call never ran again
    assert app.entries("tool") == []
    steps = step_types(app.history(session))
    assert steps[steps.index("FinishTurnCancellation") + 1] == "ApplyTurnControl"
    assert "RecordTurnFailure" not in steps


def test_an_agent_tool_named_like_an_enabled_built_in_fails_the_turn(
    dexlite: DexliteProcess, tmp_path: Path
) -> None:
    app = App(dexlite, tmp_path, script=CONTROLS_APP, factory="build_conflicting_flow")
    app.start_worker()
    try:
        session = app.start("hello")
        failed = app.wait_idle(session, 1, timeout=60)
        assert failed.state is not None
        assert failed.state.last_turn_error is not None
        assert "tool named 'ask_user'" in failed.state.last_turn_error
        assert "reserves" in failed.state.last_turn_error
        # Refused before the model call, on every attempt; the tool never ran.
        assert app.entries("model") == []
        assert app.entries("tool") == []
        assert [m.role for m in failed.messages] == [MessageRole.USER]
        assert_step_shape(app.history(session), ["RecordTurnFailure"])
    finally:
        app.stop()
