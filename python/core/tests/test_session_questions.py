"""Questions: a tool's ToolInputRequested, ask_user, answer_question, declines and deadlines."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dex_agents import ToolPolicy
from dex_agents.session._rules.turn_control import SUPERSEDED_BY_STEER_RESULT, TURN_CANCELLED_RESULT
from dex_agents.session._time import utc_now
from dex_agents_contracts import AgentSnapshot, InterruptKind, ToolCallStatus, ToolEffect
from dex_agents_testing import (
    ModelReply,
    Scenario,
    ScriptedTool,
    ScriptedToolCall,
    assert_step_shape,
    step_types,
    wait_until,
)
from dex_agents_testing.scripted import ScriptedQuestion
from helpers import Harness, HarnessFactory

DAY = ScriptedQuestion(
    question="Which day?", choices=("mon", "tue"), allows_free_text=False, continuation="c-day"
)
NOTE = ScriptedQuestion(question="Any note?", continuation="c-note")
BOOK = ScriptedTool(name="book", output="booked", questions=(DAY,))


def _call(tool_call_id: str, name: str, **arguments: Any) -> ModelReply:
    return ModelReply(
        tool_calls=[
            ScriptedToolCall(tool_call_id=tool_call_id, tool_name=name, arguments=arguments)
        ]
    )


def _asked(h: Harness, session: str, interrupt_id: str) -> AgentSnapshot:
    return h.wait_snapshot(
        session,
        lambda s: any(i.interrupt_id == interrupt_id for i in s.pending_interrupts),
        what=f"question {interrupt_id}",
    )


def _tool_outputs(snapshot: AgentSnapshot, tool_call_id: str) -> list[str]:
    return [
        m.tool_output
        for m in snapshot.messages
        if m.tool_call_id == tool_call_id and m.tool_output is not None
    ]


def _payloads(h: Harness, session: str, event_type: str, until: str) -> list[dict[str, Any]]:
    return [json.loads(e.payload) for e in h.events(session, until) if e.type == event_type]


def test_tool_question_answered_runs_the_tool_again_with_the_answer(
    harness: HarnessFactory,
) -> None:
    h = harness(script=[[_call("b1", "book"), ModelReply(text="done")]], tools=[BOOK])
    session = h.start("book it")
    waiting = _asked(h, session, "b1-input-1")
    (interrupt,) = waiting.pending_interrupts
    assert interrupt.kind is InterruptKind.QUESTION
    assert (interrupt.tool_call_id, interrupt.question) == ("b1", "Which day?")
    assert (list(interrupt.choices), interrupt.allows_free_text) == (["mon", "tue"], False)
    (record,) = waiting.tool_calls
    assert record.status is ToolCallStatus.AWAITING_ANSWER
    assert (record.input_question, record.input_continuation) == ("Which day?", "c-day")

    # answer_question's refusals: outside the choices, blank, unknown, not a question.
    assert h.client.answer_question(session, "b1-input-1", "wed") is False
    assert h.client.answer_question(session, "b1-input-1", "") is False
    assert h.client.answer_question(session, "b1-input-1", "   ") is False
    assert h.client.answer_question(session, "b1-input-2", "tue") is False
    assert h.client.answer_question(session, "b1", "tue") is False
    assert h.client.answer_question(session, "b1/input-1", "tue") is False
    assert h.client.answer_question(session, "b1-input-1", "tue") is True
    assert h.client.answer_question(session, "b1-input-1", "tue") is False
    h.wait_idle(session, 1)

    first, second = h.log.entries("tool", name="book")
    assert first["input_answers"] == []
    assert second["input_answers"] == [
        {"interrupt_id": "b1-input-1", "question": "Which day?", "answer": "tue", "resolution": 1}
    ]
    assert second["continuation"] == "c-day"
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"b1": "booked|tue"}
    raised = _payloads(h, session, "interrupt_raised", "turn_completed")
    assert raised == [
        {
            "interrupt_id": "b1-input-1",
            "tool_call_id": "b1",
            "tool_name": "book",
            "deadline": None,
            "kind": "question",
            "question": "Which day?",
            "choices": ["mon", "tue"],
            "allows_free_text": False,
        }
    ]
    assert _payloads(h, session, "interrupt_resolved", "turn_completed") == [
        {
            "interrupt_id": "b1-input-1",
            "approved": True,
            "rejection_message": None,
            "kind": "question",
            "answered": True,
            "cancellation_reason": None,
        }
    ]
    assert_step_shape(
        h.history(session),
        [
            "RunModel",
            "CallTool",
            "AwaitQuestionAnswer",  # raises the question
            "AwaitQuestionAnswer",  # applies the answer
            "CallTool",
            "ResumeTurn",
            "RunModel",
        ],
    )


def test_second_question_of_one_call_gets_the_next_interrupt_id(
    harness: HarnessFactory,
) -> None:
    tool = ScriptedTool(
        name="book", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="booked", questions=(DAY, NOTE)
    )
    h = harness(
        script=[[_call("b1", "book"), ModelReply(text="done")]],
        tools=[tool],
        tool_policies={"book": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    session = h.start("book it")
    assert _approve(h, session)
    _asked(h, session, "b1-input-1")
    assert h.client.answer_question(session, "b1-input-1", "mon")
    second = _asked(h, session, "b1-input-2")
    (interrupt,) = second.pending_interrupts
    assert (interrupt.question, interrupt.allows_free_text) == ("Any note?", True)
    assert h.client.answer_question(session, "b1-input-2", "window seat, please")
    h.wait_idle(session, 1)
    runs = h.log.entries("tool", name="book")
    assert [len(r["input_answers"]) for r in runs] == [0, 1, 2]
    assert [r["continuation"] for r in runs] == [None, "c-day", "c-note"]
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"b1": "booked|mon|window seat, please"}
    assert_step_shape(
        h.history(session),
        [
            "RunModel",
            "AwaitToolApproval",
            "CallSingleAttemptTool",
            "AwaitQuestionAnswer",
            "AwaitQuestionAnswer",
            "CallSingleAttemptTool",
            "AwaitQuestionAnswer",
            "AwaitQuestionAnswer",
            "CallSingleAttemptTool",
            "ResumeTurn",
            "RunModel",
        ],
    )


def _approve(h: Harness, session: str) -> bool:
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    return h.client.resolve_interrupt(session, "b1", approved=True)


def test_declined_tool_questions_reject_the_call(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [_call("b1", "book"), ModelReply(text="ok")],
            [_call("b2", "book"), ModelReply(text="ok")],
        ],
        tools=[BOOK],
    )
    session = h.start("book it")
    _asked(h, session, "b1-input-1")
    # approved=true is not an answer; approved=false declines.
    assert h.client.resolve_interrupt(session, "b1-input-1", approved=True) is False
    assert h.client.resolve_interrupt(session, "b1-input-1", approved=False) is True
    h.wait_idle(session, 1)
    assert h.client.send_user_message(session, "again")
    _asked(h, session, "b2-input-1")
    assert h.client.resolve_interrupt(
        session, "b2-input-1", approved=False, rejection_message="Not this week."
    )
    h.wait_idle(session, 2)
    assert h.log.count("tool", name="book") == 2  # each asked once, never ran again
    first = h.log.entries("model", turn="turn-1", call=1)[0]
    assert first["tool_results"] == {"b1": "The user declined to answer."}
    second = h.log.entries("model", turn="turn-2", call=1)[0]
    assert second["tool_results"] == {"b2": "Not this week."}
    assert _payloads(h, session, "interrupt_resolved", "turn_completed")[0] == {
        "interrupt_id": "b1-input-1",
        "approved": False,
        "rejection_message": None,
        "kind": "question",
        "answered": False,
        "cancellation_reason": None,
    }
    assert_step_shape(
        h.history(session),
        [
            "RunModel",
            "CallTool",
            "AwaitQuestionAnswer",
            "AwaitQuestionAnswer",
            "ResumeTurn",
            "RunModel",
        ],
    )


def test_question_deadline_rejects_and_a_late_answer_is_refused(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    scenario = Scenario(
        flow_type="unused",
        log_path="unused",
        script=[[_call("b1", "book"), ModelReply(text="too late")]],
        tools=[BOOK],
        interrupt_deadline_seconds=1.0,
    ).save(tmp_path / "deadline.json")
    gate = tmp_path / "wait-gate"
    h = factory_harness(
        "gated_factories:build_gated_question_flow",
        {"scenario": str(scenario), "gate": str(gate)},
    )
    session = h.start("book it")
    waiting = _asked(h, session, "b1-input-1")
    deadline = waiting.pending_interrupts[0].deadline
    assert deadline is not None
    # The waiting Step is held, so the question is still pending after its deadline.
    wait_until(lambda: utc_now() >= deadline, timeout=10, what="the deadline to pass")
    assert h.client.answer_question(session, "b1-input-1", "mon") is False
    assert h.client.resolve_interrupt(session, "b1-input-1", approved=False) is False
    assert [i.interrupt_id for i in h.snapshot(session).pending_interrupts] == ["b1-input-1"]
    gate.touch()
    done = h.wait_idle(session, 1)
    assert not done.pending_interrupts
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"b1": "question deadline passed"}
    assert h.log.count("tool", name="book") == 1
    assert _payloads(h, session, "interrupt_resolved", "turn_completed") == [
        {
            "interrupt_id": "b1-input-1",
            "approved": False,
            "rejection_message": "question deadline passed",
            "kind": "question",
            "answered": False,
            "cancellation_reason": None,
        }
    ]


def test_question_id_used_by_another_call_fails_the_asking_call(
    harness: HarnessFactory,
) -> None:
    send = ScriptedTool(name="send", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")
    h = harness(
        script=[
            [
                ModelReply(
                    tool_calls=[
                        ScriptedToolCall(tool_call_id="x-input-1", tool_name="send"),
                        ScriptedToolCall(tool_call_id="x", tool_name="book"),
                    ]
                ),
                ModelReply(text="done"),
            ]
        ],
        tools=[BOOK, send],
    )
    session = h.start("go")
    failed = h.wait_snapshot(
        session,
        lambda s: any(
            t.tool_call_id == "x" and t.status is ToolCallStatus.FAILED for t in s.tool_calls
        ),
        what="the asking call to fail",
    )
    assert [i.interrupt_id for i in failed.pending_interrupts] == ["x-input-1"]
    (record,) = [t for t in failed.tool_calls if t.tool_call_id == "x"]
    assert record.error == (
        "the tool's question cannot use interrupt ID x-input-1, "
        "which another tool call of this turn uses"
    )
    assert h.client.resolve_interrupt(session, "x-input-1", approved=True)
    h.wait_idle(session, 1)
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "x-input-1": "sent",
        "x": (
            "The tool call failed: the tool's question cannot use interrupt ID x-input-1, "
            "which another tool call of this turn uses"
        ),
    }
    raised = _payloads(h, session, "interrupt_raised", "turn_completed")
    assert [p["interrupt_id"] for p in raised] == ["x-input-1"]


def test_answer_question_refuses_approvals_and_idle_sessions(harness: HarnessFactory) -> None:
    send = ScriptedTool(name="send", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")
    h = harness(script=[[_call("w1", "send"), ModelReply(text="done")]], tools=[send])
    session = h.start()
    h.wait_idle(session, 0)
    assert h.client.answer_question(session, "w1", "yes") is False  # nothing pending
    assert h.client.send_user_message(session, "send it")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    assert h.client.answer_question(session, "w1", "yes") is False  # an approval
    assert h.client.answer_question(session, "", "yes") is False
    assert h.client.resolve_interrupt(session, "w1", approved=True)
    h.wait_idle(session, 1)


def _ask(tool_call_id: str, **arguments: Any) -> ModelReply:
    return _call(tool_call_id, "ask_user", **arguments)


COLOR = {"question": "Which color?", "choices": ["red", "blue"], "allows_free_text": False}


def test_ask_user_answers_become_the_calls_result(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [_ask("a1", **COLOR), ModelReply(text="blue it is")],
            [_ask("a2", question="Any wish?", choices=None), ModelReply(text="noted")],
        ],
        built_in_tools=("ask_user",),
    )
    session = h.start("paint it")
    waiting = _asked(h, session, "a1")
    (interrupt,) = waiting.pending_interrupts
    assert (interrupt.kind, interrupt.tool_call_id, interrupt.tool_name) == (
        InterruptKind.QUESTION,
        "a1",
        "ask_user",
    )
    assert (interrupt.question, list(interrupt.choices)) == ("Which color?", ["red", "blue"])
    assert interrupt.allows_free_text is False
    (record,) = waiting.tool_calls
    assert record.status is ToolCallStatus.AWAITING_ANSWER
    assert h.client.answer_question(session, "a1", "green") is False
    assert h.client.resolve_interrupt(session, "a1", approved=True) is False
    assert h.client.answer_question(session, "a1", "blue") is True
    h.wait_idle(session, 1)
    assert h.client.send_user_message(session, "anything else?")
    _asked(h, session, "a2")
    assert h.client.answer_question(session, "a2", 'Blau, hellgrün, "bitte"')
    h.wait_idle(session, 2)

    first = h.log.entries("model", turn="turn-1", call=1)[0]
    assert first["tool_results"] == {"a1": '{"status":"answered","answer":"blue"}'}
    second = h.log.entries("model", turn="turn-2", call=1)[0]
    assert second["tool_results"] == {
        "a2": '{"status":"answered","answer":"Blau, hellgrün, \\"bitte\\""}'
    }
    raised = _payloads(h, session, "interrupt_raised", "turn_completed")
    assert raised == [
        {
            "interrupt_id": "a1",
            "tool_call_id": "a1",
            "tool_name": "ask_user",
            "deadline": None,
            "kind": "question",
            "question": "Which color?",
            "choices": ["red", "blue"],
            "allows_free_text": False,
        }
    ]
    assert_step_shape(
        h.history(session), ["RunModel", "AwaitQuestionAnswer", "ResumeTurn", "RunModel"]
    )


def test_ask_user_declines_and_deadlines_reject_the_call(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [_ask("a1", question="Why?"), ModelReply(text="ok")],
            [_ask("a2", question="Why?"), ModelReply(text="ok")],
        ],
        built_in_tools=("ask_user",),
    )
    session = h.start("ask me")
    _asked(h, session, "a1")
    assert h.client.resolve_interrupt(
        session, "a1", approved=False, rejection_message="I'd rather not say."
    )
    h.wait_idle(session, 1)
    assert h.client.send_user_message(session, "ask again")
    _asked(h, session, "a2")
    assert h.client.resolve_interrupt(session, "a2", approved=False)
    h.wait_idle(session, 2)
    first = h.log.entries("model", turn="turn-1", call=1)[0]
    assert first["tool_results"] == {"a1": "I'd rather not say."}
    second = h.log.entries("model", turn="turn-2", call=1)[0]
    assert second["tool_results"] == {"a2": "The user declined to answer."}

    timed = harness(
        script=[[_ask("a1", question="Quick?"), ModelReply(text="ok")]],
        built_in_tools=("ask_user",),
        interrupt_deadline_seconds=1.0,
    )
    other = timed.start("ask me")
    done = timed.wait_idle(other, 1)
    assert not done.pending_interrupts
    (resumed,) = timed.log.entries("model", call=1)
    assert resumed["tool_results"] == {"a1": "question deadline passed"}
    assert timed.client.answer_question(other, "a1", "yes") is False


def test_steer_abandons_a_waiting_tool_question(harness: HarnessFactory) -> None:
    h = harness(script=[[_call("b1", "book")], [ModelReply(text="ok")]], tools=[BOOK])
    session = h.start("book it")
    _asked(h, session, "b1-input-1")
    assert h.client.steer_user_message(session, text="never mind")
    done = h.wait_idle(session, 2)
    assert h.client.answer_question(session, "b1-input-1", "mon") is False
    assert h.log.count("tool", name="book") == 1
    assert done.pending_interrupts == []
    tool_outputs = [
        m.tool_output for m in done.messages if m.tool_call_id == "b1" and m.tool_output
    ]
    assert tool_outputs == [SUPERSEDED_BY_STEER_RESULT]
    events = h.events(session, "turn_completed")
    (resolved,) = [json.loads(e.payload) for e in events if e.type == "interrupt_resolved"]
    assert resolved["interrupt_id"] == "b1-input-1"
    assert resolved["cancellation_reason"] == "steered"
    (finished,) = [json.loads(e.payload) for e in events if e.type == "tool_call_finished"]
    assert finished["status"] == "rejected"


def test_steer_before_a_tool_question_is_raised_asks_nothing(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "tool-gate"
    held = ScriptedTool(name="book", output="booked", questions=(DAY,), gate=str(gate))
    h = harness(script=[[_call("b1", "book")], [ModelReply(text="ok")]], tools=[held])
    session = h.start("book it")
    wait_until(lambda: h.log.count("tool") == 1, what="the tool to start")
    assert h.client.steer_user_message(session, text="never mind")
    gate.touch()  # the tool asks after the steer committed
    done = h.wait_idle(session, 2)
    assert h.log.count("tool") == 1
    types = [e.type for e in h.events(session, "turn_completed")]
    assert "interrupt_raised" not in types
    tool_outputs = [
        m.tool_output for m in done.messages if m.tool_call_id == "b1" and m.tool_output
    ]
    assert tool_outputs == [SUPERSEDED_BY_STEER_RESULT]


def test_cancel_turn_abandons_a_waiting_ask_user(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_ask("a1", question="Why?")], [ModelReply(text="ok")]],
        built_in_tools=("ask_user",),
    )
    session = h.start("ask me")
    _asked(h, session, "a1")
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)
    assert done.pending_interrupts == []
    assert h.client.answer_question(session, "a1", "because") is False
    tool_outputs = [
        m.tool_output for m in done.messages if m.tool_call_id == "a1" and m.tool_output
    ]
    assert tool_outputs == [TURN_CANCELLED_RESULT]


def test_an_answer_that_commits_before_the_steer_wins(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    scenario = Scenario(
        flow_type="unused",
        log_path="unused",
        script=[[_ask("a1", question="Why?")], [ModelReply(text="ok")]],
        built_in_tools=("ask_user",),
    ).save(tmp_path / "race.json")
    gate = tmp_path / "wait-gate"
    h = factory_harness(
        "gated_factories:build_gated_question_flow",
        {"scenario": str(scenario), "gate": str(gate)},
    )
    session = h.start("ask me")
    _asked(h, session, "a1")  # its waiting Step is held before it registers its wait
    assert h.client.answer_question(session, "a1", "because")
    assert h.client.steer_user_message(session, text="something else")
    wait_until(
        lambda: "ResumeTurn" in step_types(h.history(session)), what="ResumeTurn's control wake"
    )
    gate.touch()
    done = h.wait_idle(session, 2)
    assert _tool_outputs(done, "a1") == ['{"status":"answered","answer":"because"}']
    events = h.events(session, "turn_completed")
    assert [
        json.loads(e.payload)["cancellation_reason"]
        for e in events
        if e.type == "interrupt_resolved"
    ] == [None]


def test_an_answer_before_cancel_turn_wins_but_the_tool_never_runs(
    factory_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    scenario = Scenario(
        flow_type="unused",
        log_path="unused",
        script=[[_call("b1", "book")], [ModelReply(text="ok")]],
        tools=[BOOK],
    ).save(tmp_path / "cancel-race.json")
    gate = tmp_path / "wait-gate"
    h = factory_harness(
        "gated_factories:build_gated_question_flow",
        {"scenario": str(scenario), "gate": str(gate)},
    )
    session = h.start("book it")
    _asked(h, session, "b1-input-1")
    assert h.client.answer_question(session, "b1-input-1", "mon")
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)
    # The answer committed first, so the question settled as answered; the tool
    # Step then saw the cancelled turn and recorded the call before it started.
    assert h.log.count("tool", name="book") == 1
    assert _tool_outputs(done, "b1") == [TURN_CANCELLED_RESULT]
    types = step_types(h.history(session))
    assert types[types.index("FinishTurnCancellation") :] == [
        "FinishTurnCancellation",
        "AwaitQuestionAnswer",
        "CallTool",
        "ResumeTurn",
        "ApplyTurnControl",
    ]
    gate.touch()  # release the Worker's cancelled wait
