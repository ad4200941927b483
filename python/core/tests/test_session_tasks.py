"""Tool tasks: ToolTaskStarted, PollToolTask's polls and questions, crashes, and refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dex_agents import ToolPolicy
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents.session._rules.tool_outcomes import (
    TASK_ID_BLANK_ERROR,
    TASK_INTERVAL_NOT_A_NUMBER_ERROR,
    TASK_POLLING_UNSUPPORTED_ERROR,
    poll_interval_seconds,
)
from dex_agents.session._rules.turn_control import TASK_CANCELLED_ERROR
from dex_agents_contracts import AgentSnapshot, CancellationReason, ToolCallStatus, ToolEffect
from dex_agents_testing import (
    ModelReply,
    ScriptedTool,
    ScriptedToolCall,
    assert_step_shape,
    step_types,
    wait_until,
)
from dex_agents_testing.scripted import ScriptedPoll, ScriptedQuestion, ScriptedTask
from helpers import Harness, HarnessFactory

NO_APPROVAL = ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=False)


def _calls(*pairs: tuple[str, str]) -> ModelReply:
    return ModelReply(tool_calls=[ScriptedToolCall(tool_call_id=i, tool_name=n) for i, n in pairs])


def _record(h: Harness, session: str, tool_call_id: str, **match: Any) -> AgentSnapshot:
    def check(s: AgentSnapshot) -> bool:
        return any(
            t.tool_call_id == tool_call_id
            and all(getattr(t, key) == value for key, value in match.items())
            for t in s.tool_calls
        )

    return h.wait_snapshot(session, check, what=f"record {tool_call_id} with {match}")


def _payloads(h: Harness, session: str, event_type: str, until: str) -> list[dict[str, Any]]:
    return [json.loads(e.payload) for e in h.events(session, until) if e.type == event_type]


def test_poll_interval_is_whole_seconds_from_one_second_to_a_day() -> None:
    assert [poll_interval_seconds(v) for v in (0, 0.2, 1, 1.5, 2.0, 86_399.5, 1e12)] == [
        1,
        1,
        1,
        2,
        2,
        86_400,
        86_400,
    ]
    assert poll_interval_seconds(float("inf")) == 86_400
    for not_a_number in (float("nan"), "5", None, True):
        assert poll_interval_seconds(not_a_number) is None


def test_task_completes_after_polls_at_the_rounded_intervals(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "last-poll"
    report = ScriptedTool(
        name="report",
        task=ScriptedTask(
            poll_interval_seconds=0.2,
            polls=(
                ScriptedPoll(kind="pending", poll_interval_seconds=1.5),
                ScriptedPoll(kind="succeed", output="report ready", gate=str(gate)),
            ),
        ),
    )
    h = harness(
        script=[[_calls(("r1", "report")), ModelReply(text="done")]],
        tools=[report],
        task_runner=True,
    )
    session = h.start("make the report")
    wait_until(lambda: h.log.count("poll", index=1) == 1, what="the second poll")
    polling = _record(h, session, "r1", task_poll_interval_seconds=2)
    (record,) = polling.tool_calls
    assert record.status is ToolCallStatus.WAITING_FOR_TASK
    assert (record.task_id, record.input_continuation) == ("task-r1-1", "poll:1")
    gate.touch()
    h.wait_idle(session, 1)
    assert h.log.count("task_start") == 1
    (tool_run,) = h.log.entries("tool", name="report")
    assert tool_run["supports_tool_tasks"] is True
    polls = h.log.entries("poll")
    assert [(p["index"], p["interval"], p["continuation"]) for p in polls] == [
        (0, 1, None),
        (1, 2, "poll:1"),
    ]
    assert {p["key"] for p in polls} == {f"{session}/turn-1/r1"}
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"r1": "report ready"}
    assert _payloads(h, session, "tool_task_started", "turn_completed") == [
        {"tool_call_id": "r1", "tool_name": "report", "task_id": "task-r1-1"}
    ]
    assert_step_shape(
        h.history(session),
        ["RunModel", "CallTool", "PollToolTask", "PollToolTask", "ResumeTurn", "RunModel"],
    )


def test_task_questions_reach_the_task_as_pending_answers(harness: HarnessFactory) -> None:
    confirm = ScriptedQuestion(question="Really file it?", choices=("yes", "no"))
    filing = ScriptedTool(
        name="file",
        effect=ToolEffect.IDEMPOTENT_WRITE,
        task=ScriptedTask(
            polls=(
                ScriptedPoll(kind="question", question=confirm),
                ScriptedPoll(kind="succeed", output="filed"),
            )
        ),
    )
    h = harness(
        script=[
            [_calls(("f1", "file")), ModelReply(text="done")],
            [_calls(("f2", "file")), ModelReply(text="done")],
        ],
        tools=[filing],
        tool_policies={"file": NO_APPROVAL},
        task_runner=True,
    )
    session = h.start("file it")
    asked = h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the question")
    (interrupt,) = asked.pending_interrupts
    assert (interrupt.interrupt_id, interrupt.question) == ("f1-input-1", "Really file it?")
    (record,) = asked.tool_calls
    assert record.status is ToolCallStatus.AWAITING_ANSWER
    assert (record.task_id, record.input_continuation) == ("task-f1-1", "poll:1")
    assert h.client.answer_question(session, "f1-input-1", "yes")
    h.wait_idle(session, 1)
    answered = h.log.entries("poll", tool_call_id="f1")
    assert [p["pending_answer"] for p in answered] == [
        None,
        {
            "interrupt_id": "f1-input-1",
            "question": "Really file it?",
            "answer": "yes",
            "resolution": 1,
        },
    ]
    assert answered[1]["continuation"] == "poll:1"
    (resumed,) = h.log.entries("model", turn="turn-1", call=1)
    assert resumed["tool_results"] == {"f1": "filed|yes"}
    assert_step_shape(
        h.history(session),
        [
            "RunModel",
            "CallTool",
            "PollToolTask",
            "AwaitQuestionAnswer",
            "AwaitQuestionAnswer",
            "PollToolTask",
            "ResumeTurn",
            "RunModel",
        ],
    )

    # A decline does not end the call: the task receives it and decides.
    assert h.client.send_user_message(session, "file another")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the second question")
    assert h.client.resolve_interrupt(session, "f2-input-1", approved=False)
    h.wait_idle(session, 2)
    declined = h.log.entries("poll", tool_call_id="f2")[-1]
    assert declined["pending_answer"] == {
        "interrupt_id": "f2-input-1",
        "question": "Really file it?",
        "answer": "The user declined to answer.",
        "resolution": 2,
    }
    (resumed,) = h.log.entries("model", turn="turn-2", call=1)
    assert resumed["tool_results"] == {"f2": "filed|The user declined to answer."}
    assert h.log.count("task_start") == 2


def test_worker_killed_during_a_poll_polls_again_without_a_second_task(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "poll-gate"
    report = ScriptedTool(
        name="report",
        task=ScriptedTask(polls=(ScriptedPoll(kind="succeed", output="ready", gate=str(gate)),)),
    )
    h = harness(
        script=[[_calls(("r1", "report")), ModelReply(text="done")]],
        tools=[report],
        task_runner=True,
    )
    session = h.start("report")
    wait_until(lambda: h.log.count("poll") == 1, what="the poll to start")
    h.restart_worker()  # SIGKILL mid-poll
    gate.touch()
    h.wait_idle(session, 1, timeout=60)
    assert h.log.count("task_start") == 1
    assert h.log.count("tool", name="report") == 1
    assert h.log.count("poll") == 2
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"r1": "ready"}
    assert_step_shape(
        h.history(session), ["RunModel", "CallTool", "PollToolTask", "ResumeTurn", "RunModel"]
    )


def test_worker_killed_after_the_task_checkpoint_returns_the_same_task(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "start-gate"
    report = ScriptedTool(
        name="report",
        effect=ToolEffect.IDEMPOTENT_WRITE,
        task=ScriptedTask(gate=str(gate), polls=(ScriptedPoll(kind="succeed", output="ready"),)),
    )
    h = harness(
        script=[[_calls(("r1", "report")), ModelReply(text="done")]],
        tools=[report],
        tool_policies={"report": NO_APPROVAL},
        task_runner=True,
    )
    session = h.start("report")
    # The event follows the checkpoint's heartbeat, so Dex holds the checkpoint.
    h.events(session, "scripted.task_checkpointed")
    h.restart_worker()  # SIGKILL before the tool returned ToolTaskStarted
    gate.touch()
    h.wait_idle(session, 1, timeout=60)
    (started,) = h.log.entries("task_start")
    (resumed_task,) = h.log.entries("task_resume")
    assert started["task_id"] == resumed_task["task_id"] == "task-r1-1"
    assert resumed_task["attempt"] == 2
    runs = h.log.entries("tool", name="report")
    assert [r["checkpoint"] for r in runs] == [None, "task-r1-1"]
    assert {p["task_id"] for p in h.log.entries("poll")} == {"task-r1-1"}
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"r1": "ready"}
    assert_step_shape(
        h.history(session), ["RunModel", "CallTool", "PollToolTask", "ResumeTurn", "RunModel"]
    )


def test_tasks_nobody_can_poll_are_recorded_by_effect(harness: HarnessFactory) -> None:
    task = ScriptedTask(polls=(ScriptedPoll(kind="succeed"),))
    h = harness(
        script=[[_calls(("r1", "scan"), ("w1", "deploy")), ModelReply(text="done")]],
        tools=[
            ScriptedTool(name="scan", task=task),
            ScriptedTool(name="deploy", effect=ToolEffect.IDEMPOTENT_WRITE, task=task),
        ],
        tool_policies={"deploy": NO_APPROVAL},
    )
    session = h.start("go")
    h.wait_idle(session, 1)
    assert [r["supports_tool_tasks"] for r in h.log.entries("tool")] == [False, False]
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "r1": f"The tool call failed: {TASK_POLLING_UNSUPPORTED_ERROR}",
        "w1": OUTCOME_UNKNOWN_RESULT,
    }
    assert_step_shape(
        h.history(session), ["RunModel", ("CallTool", "CallTool"), "ResumeTurn", "RunModel"]
    )


def test_blank_task_ids_and_intervals_that_are_not_numbers_are_refused(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[
            [_calls(("r1", "blank"), ("r2", "nan"), ("w1", "nan_write")), ModelReply(text="x")]
        ],
        tools=[
            ScriptedTool(name="blank", task=ScriptedTask(task_id=" ")),
            ScriptedTool(name="nan", task=ScriptedTask(poll_interval_seconds=float("nan"))),
            ScriptedTool(
                name="nan_write",
                effect=ToolEffect.NON_IDEMPOTENT_WRITE,
                task=ScriptedTask(poll_interval_seconds=float("nan")),
            ),
        ],
        tool_policies={
            "nan_write": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
        },
        task_runner=True,
    )
    session = h.start("go")
    h.wait_idle(session, 1)
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "r1": f"The tool call failed: {TASK_ID_BLANK_ERROR}",
        "r2": f"The tool call failed: {TASK_INTERVAL_NOT_A_NUMBER_ERROR}",
        "w1": OUTCOME_UNKNOWN_RESULT,
    }
    assert h.log.count("poll") == 0


def test_task_failures_end_the_call_by_effect(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [_calls(("r1", "failing"), ("r2", "crashing"), ("w1", "crashing_write")), ModelReply()]
        ],
        tools=[
            ScriptedTool(
                name="failing",
                task=ScriptedTask(polls=(ScriptedPoll(kind="fail", error="disk full"),)),
            ),
            ScriptedTool(
                name="crashing",
                task=ScriptedTask(polls=(ScriptedPoll(crash_attempts=99),)),
            ),
            ScriptedTool(
                name="crashing_write",
                effect=ToolEffect.NON_IDEMPOTENT_WRITE,
                task=ScriptedTask(polls=(ScriptedPoll(crash_attempts=99),)),
            ),
        ],
        tool_policies={
            "crashing_write": ToolPolicy(
                effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False
            )
        },
        task_runner=True,
    )
    session = h.start("go")
    h.wait_idle(session, 1, timeout=90)
    assert h.log.count("poll", tool_call_id="r1") == 1  # ToolExecutionError is not retried
    assert h.log.count("poll", tool_call_id="r2") == 3
    assert h.log.count("poll", tool_call_id="w1") == 3
    (resumed,) = h.log.entries("model", call=1)
    results = resumed["tool_results"]
    assert results["r1"] == "The tool call failed: disk full"
    assert results["r2"].startswith("The tool call failed: ")
    assert "scripted poll crash on attempt 3" in results["r2"]
    assert results["w1"] == OUTCOME_UNKNOWN_RESULT
    # Each poll's failure route follows its call's effect.
    types = step_types(h.history(session))
    assert (types.count("RecordToolFailure"), types.count("RecordToolOutcomeUnknown")) == (1, 1)


def _cancelled_record(h: Harness, turn: str, tool_call_id: str) -> dict[str, Any]:
    """The record the runner saw as the cancelled turn ended (build_unfinished_turn_messages)."""
    (entry,) = h.log.entries("unfinished", turn=turn)
    record: dict[str, Any] = entry["records"][tool_call_id]
    return record


def test_steering_leaves_a_started_tasks_question_waiting(harness: HarnessFactory) -> None:
    confirm = ScriptedQuestion(question="Really file it?")
    filing = ScriptedTool(
        name="file",
        task=ScriptedTask(
            polls=(
                ScriptedPoll(kind="question", question=confirm),
                ScriptedPoll(kind="succeed", output="filed"),
            )
        ),
    )
    h = harness(
        script=[[_calls(("f1", "file"))], [ModelReply(text="hurrying")]],
        tools=[filing],
        task_runner=True,
    )
    session = h.start("file it")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the task's question")
    assert h.client.steer_user_message(session, text="hurry up")
    # ResumeTurn took the control wake and left the task's question alone.
    wait_until(
        lambda: "ResumeTurn" in step_types(h.history(session)), what="ResumeTurn's control wake"
    )
    still = h.snapshot(session)
    assert [i.interrupt_id for i in still.pending_interrupts] == ["f1-input-1"]
    assert still.state is not None
    assert still.state.turn_count == 0
    assert h.client.answer_question(session, "f1-input-1", "yes")
    done = h.wait_idle(session, 2)
    assert h.log.entries("poll")[-1]["pending_answer"]["answer"] == "yes"
    assert [m.tool_output for m in done.messages if m.tool_call_id == "f1" and m.tool_output] == [
        "filed|yes"
    ]
    types = [e.type for e in h.events(session, "turn_completed")]
    assert types.count("turn_steered") == 1


def test_cancel_turn_cancels_a_started_task(harness: HarnessFactory) -> None:
    report = ScriptedTool(
        name="report",
        task=ScriptedTask(polls=(ScriptedPoll(kind="pending", poll_interval_seconds=3600),)),
    )
    h = harness(
        script=[[_calls(("r1", "report"))], [ModelReply(text="ok")]],
        tools=[report],
        task_runner=True,
    )
    session = h.start("report")
    _record(h, session, "r1", task_poll_interval_seconds=3600)
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)
    (cancelled,) = h.log.entries("cancel_task")
    assert (cancelled["task_id"], cancelled["key"]) == ("task-r1-1", f"{session}/turn-1/r1")
    assert h.log.count("poll") == 1
    assert _cancelled_record(h, "turn-1", "r1") == {
        "status": int(ToolCallStatus.OUTCOME_UNKNOWN),
        "error": TASK_CANCELLED_ERROR,
        "cancellation_reason": int(CancellationReason.TURN_CANCELLED),
    }
    outputs = [m.tool_output for m in done.messages if m.tool_call_id == "r1" and m.tool_output]
    assert outputs == [OUTCOME_UNKNOWN_RESULT]
    types = step_types(h.history(session))
    assert types[types.index("FinishTurnCancellation") :] == [
        "FinishTurnCancellation",
        "CancelToolTask",
        "ResumeTurn",
        "ApplyTurnControl",
    ]


def test_a_poll_that_starts_after_cancel_turn_hands_the_task_over_without_polling(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "start-gate"
    report = ScriptedTool(name="report", task=ScriptedTask(gate=str(gate)))
    h = harness(
        script=[[_calls(("r1", "report"))], [ModelReply(text="ok")]],
        tools=[report],
        task_runner=True,
    )
    session = h.start("report")
    h.events(session, "scripted.task_checkpointed")
    assert h.client.cancel_turn(session)  # the tool Step runs on
    wait_until(
        lambda: "FinishTurnCancellation" in step_types(h.history(session)),
        what="FinishTurnCancellation",
    )
    gate.touch()  # now the task starts: its PollToolTask begins in a cancelled turn
    h.wait_idle(session, 1)
    assert h.log.count("task_start") == 1
    assert h.log.count("poll") == 0
    assert h.log.count("cancel_task") == 1
    assert _cancelled_record(h, "turn-1", "r1")["error"] == TASK_CANCELLED_ERROR
    types = step_types(h.history(session))
    assert types[types.index("FinishTurnCancellation") :] == [
        "FinishTurnCancellation",  # the call was still running: its tool Step owns it
        "CallTool",
        "PollToolTask",  # waited on a zero Timer and polled nothing
        "FinishTurnCancellation",
        "CancelToolTask",
        "ResumeTurn",
        "ApplyTurnControl",
    ]


def test_a_cancellation_that_keeps_failing_still_ends_the_turn(harness: HarnessFactory) -> None:
    report = ScriptedTool(
        name="report",
        effect=ToolEffect.NON_IDEMPOTENT_WRITE,
        task=ScriptedTask(
            polls=(ScriptedPoll(kind="pending", poll_interval_seconds=3600),),
            cancel_crash_attempts=99,
        ),
    )
    h = harness(
        script=[[_calls(("r1", "report"))], [ModelReply(text="ok")]],
        tools=[report],
        tool_policies={
            "report": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
        },
        task_runner=True,
    )
    session = h.start("report")
    _record(h, session, "r1", task_poll_interval_seconds=3600)
    assert h.client.cancel_turn(session)
    h.wait_idle(session, 1, timeout=120)
    assert h.log.count("cancel_task") == 3
    assert _cancelled_record(h, "turn-1", "r1") == {
        "status": int(ToolCallStatus.OUTCOME_UNKNOWN),
        "error": TASK_CANCELLED_ERROR,
        "cancellation_reason": int(CancellationReason.TURN_CANCELLED),
    }
    types = step_types(h.history(session))
    assert types[types.index("FinishTurnCancellation") :] == [
        "FinishTurnCancellation",
        "RecordToolOutcomeUnknown",
        "ResumeTurn",
        "ApplyTurnControl",
    ]


def test_cancel_turn_during_a_tasks_question_cancels_the_task(harness: HarnessFactory) -> None:
    confirm = ScriptedQuestion(question="Really file it?")
    filing = ScriptedTool(
        name="file",
        task=ScriptedTask(polls=(ScriptedPoll(kind="question", question=confirm),)),
    )
    h = harness(
        script=[[_calls(("f1", "file"))], [ModelReply(text="ok")]],
        tools=[filing],
        task_runner=True,
    )
    session = h.start("file it")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the task's question")
    assert h.client.cancel_turn(session)
    done = h.wait_idle(session, 1)
    assert done.pending_interrupts == []
    assert h.client.answer_question(session, "f1-input-1", "yes") is False
    assert h.log.count("cancel_task") == 1
    assert _cancelled_record(h, "turn-1", "f1")["error"] == TASK_CANCELLED_ERROR


def test_a_tasks_question_deadline_reaches_the_task(harness: HarnessFactory) -> None:
    confirm = ScriptedQuestion(question="Really file it?")
    filing = ScriptedTool(
        name="file",
        task=ScriptedTask(
            polls=(
                ScriptedPoll(kind="question", question=confirm),
                ScriptedPoll(kind="succeed", output="filed anyway"),
            )
        ),
    )
    h = harness(
        script=[[_calls(("f1", "file")), ModelReply(text="done")]],
        tools=[filing],
        task_runner=True,
        interrupt_deadline_seconds=1.0,
    )
    session = h.start("file it")
    done = h.wait_idle(session, 1)
    assert not done.pending_interrupts
    assert h.log.entries("poll")[-1]["pending_answer"] == {
        "interrupt_id": "f1-input-1",
        "question": "Really file it?",
        "answer": "question deadline passed",
        "resolution": 3,
    }
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"f1": "filed anyway|question deadline passed"}


def test_a_tasks_question_whose_id_is_taken_is_recorded_by_effect(
    harness: HarnessFactory,
) -> None:
    confirm = ScriptedQuestion(question="Really?")
    task = ScriptedTask(polls=(ScriptedPoll(kind="question", question=confirm),))
    h = harness(
        script=[
            [
                _calls(
                    ("r-input-1", "lookup"), ("r", "scan"), ("w-input-1", "lookup"), ("w", "push")
                ),
                ModelReply(text="done"),
            ]
        ],
        tools=[
            ScriptedTool(name="lookup", output="42"),
            ScriptedTool(name="scan", task=task),
            ScriptedTool(name="push", effect=ToolEffect.IDEMPOTENT_WRITE, task=task),
        ],
        tool_policies={"push": NO_APPROVAL},
        task_runner=True,
    )
    session = h.start("go")
    h.wait_idle(session, 1)
    error = (
        "the tool's question cannot use interrupt ID r-input-1, "
        "which another tool call of this turn uses"
    )
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {
        "r-input-1": "42",
        "r": f"The tool call failed: {error}",
        "w-input-1": "42",
        "w": OUTCOME_UNKNOWN_RESULT,
    }
    types = [e.type for e in h.events(session, "turn_completed")]
    assert "interrupt_raised" not in types


def test_a_task_asking_after_a_steer_still_asks(harness: HarnessFactory, tmp_path: Path) -> None:
    gate = tmp_path / "poll-gate"
    confirm = ScriptedQuestion(question="Really file it?")
    filing = ScriptedTool(
        name="file",
        task=ScriptedTask(
            polls=(
                ScriptedPoll(kind="question", question=confirm, gate=str(gate)),
                ScriptedPoll(kind="succeed", output="filed"),
            )
        ),
    )
    h = harness(
        script=[[_calls(("f1", "file"))], [ModelReply(text="ok")]],
        tools=[filing],
        task_runner=True,
    )
    session = h.start("file it")
    wait_until(lambda: h.log.count("poll") == 1, what="the poll to start")
    assert h.client.steer_user_message(session, text="hurry up")
    gate.touch()  # the task asks after the steer committed: its question is raised anyway
    asked = h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the question")
    assert [i.interrupt_id for i in asked.pending_interrupts] == ["f1-input-1"]
    assert h.client.answer_question(session, "f1-input-1", "yes")
    done = h.wait_idle(session, 2)
    assert [m.tool_output for m in done.messages if m.tool_call_id == "f1" and m.tool_output] == [
        "filed|yes"
    ]
