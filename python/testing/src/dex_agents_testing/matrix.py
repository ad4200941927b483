"""The design document's test matrix, 1 to 11, as pytest functions: now only the
TypeScript adapters' remote matrices (python/core/tests/remote_matrix*.py) run these;
the Python adapters run `dex_agents_testing.conformance` (the cases as data).

An adapter's suite runs these tests against its own application module (a
`WorkerApp` script whose scripted model follows the shared prompts below) by
importing them into a test module, with the fixtures of
`adapter_suites.worker_app_fixtures` plus `matrix` (a `MatrixExpectations`) and
`make_app` in its conftest. The application's model answers by the user prompt:
"weather" calls get_weather, "parallel" calls it twice, "book" calls get_weather
and the approval-gated book_trip, "charge" the single-attempt charge (held by
the `charge` gate), "slow" holds its second model call on the `model` gate,
"fail" runs charge_now and then fails every model call, "city" answers with
structured output that needs one validation retry; otherwise it answers
"I have seen N messages.". Each tool call's id is a letter plus the number of
user prompts so far (w1, a1/b1, r1/k1, p1, f1), and "Results: name=output; ..."
answers tool results.

| Item | Test |
|---|---|
| 1, 11 | test_read_tool_turn_has_step_shape_and_replays_history |
| 2 | test_parallel_tool_calls_run_as_parallel_steps |
| 3 | test_approved_write_survives_worker_restart_and_runs_once |
| 4 | test_rejected_write_never_runs_and_the_model_sees_why |
| 5 | test_sigkill_during_single_attempt_tool_records_outcome_unknown |
| 6 | test_sigkill_during_run_model_reruns_only_that_model_call |
| 7 | test_rejected_write_... (a second resolve_interrupt is false) |
| 7 | test_approval_deadline_rejects_the_call |
| 8 | test_failed_turn_after_write_leaves_note_and_write_is_not_repeated |
| 9 | test_async_durability_default_never_reruns_single_attempt_write |
| 10 | test_message_sent_during_a_turn_is_queued |
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dex import FlowConfig, StartFlowOptions, StepDurability
from dex_agents.results import APPROVAL_DEADLINE_PASSED, OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentSnapshot, MessageRole, ToolCallStatus

from dex_agents_testing.history import assert_step_shape, fetch_history
from dex_agents_testing.processes import DexliteProcess, wait_until
from dex_agents_testing.worker_apps import WorkerApp

__all__ = [
    "MatrixExpectations",
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_tool_calls_run_as_parallel_steps",
    "test_read_tool_turn_has_step_shape_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_sigkill_during_run_model_reruns_only_that_model_call",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
    "test_structured_output_with_a_validator_retry_is_two_run_model_steps",
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]


@dataclass(frozen=True)
class MatrixExpectations:
    """Where frameworks store a turn differently."""

    messages_after_booking: int
    """Messages the model sees in the turn after a "book" turn: the first turn as the
    framework stores it (one message per tool call, or one for the whole response)
    plus the new user message."""

    structured_output_as_text: bool = False
    """The answer is the structured output as JSON text and a retry prompt is a user
    message (the AI SDK's output spec), instead of an output tool call and its result."""


def test_read_tool_turn_has_step_shape_and_replays_history(app: WorkerApp) -> None:
    session = app.start("weather in Paris?")
    first = app.wait_idle(session, 1)
    assert [m.role for m in first.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert first.messages[1].tool_name == "get_weather"
    assert first.messages[2].tool_output == "sunny in Paris"
    assert first.messages[3].text == "Results: get_weather=sunny in Paris"
    assert first.usage is not None
    assert first.usage.model_calls == 2

    assert app.client.send_user_message(session, "thanks")
    second = app.wait_idle(session, 2)
    # The second turn's one model call saw the four stored messages plus the new one.
    assert second.messages[-1].text == "I have seen 5 messages."
    history = fetch_history(app.server.address, session, app.runs[session])
    assert_step_shape(history, ["RunModel", "CallTool", "ResumeTurn", "RunModel"], turn=0)
    assert_step_shape(history, ["RunModel"], turn=1)
    (run,) = app.entries("tool", "get_weather")
    assert run["key"] == f"{session}/turn-1/w1"
    assert len(app.entries("model")) == 3


def test_parallel_tool_calls_run_as_parallel_steps(app: WorkerApp) -> None:
    session = app.start("parallel weather")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Oslo; get_weather=sunny in Lima"
    )
    (shape,) = app.shapes(session)
    assert shape.count("CallTool") == 2
    assert shape[0] == "RunModel"
    assert shape[-2:] == ["ResumeTurn", "RunModel"]
    assert len(app.entries("tool", "get_weather")) == 2


def _awaiting_approval(snapshot: AgentSnapshot) -> bool:
    return any(i.tool_call_id == "k1" for i in snapshot.pending_interrupts) and any(
        r.tool_call_id == "r1" and r.status is ToolCallStatus.SUCCEEDED for r in snapshot.tool_calls
    )


def test_approved_write_survives_worker_restart_and_runs_once(app: WorkerApp) -> None:
    session = app.start("book Rome")
    app.wait(session, "the approval wait next to a finished READ call", _awaiting_approval)
    assert app.entries("tool", "book_trip") == []
    app.kill_worker()
    app.start_worker()
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Rome; book_trip=booked Rome"
    )
    assert len(app.entries("tool", "book_trip")) == 1
    (shape,) = app.shapes(session)
    assert "AwaitToolApproval" in shape
    assert "CallSingleAttemptTool" in shape


def test_rejected_write_never_runs_and_the_model_sees_why(app: WorkerApp) -> None:
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    assert app.client.resolve_interrupt(
        session, "k1", approved=False, rejection_message="Not this week."
    )
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Rome; book_trip=Not this week."
    )
    assert app.entries("tool", "book_trip") == []
    assert not app.client.resolve_interrupt(session, "k1", approved=True)


def test_approval_deadline_rejects_the_call(
    make_app: Callable[..., WorkerApp], dexlite: DexliteProcess, tmp_path: Path
) -> None:
    app = make_app(dexlite, tmp_path, interrupt_deadline=1.0)
    app.start_worker()
    try:
        session = app.start("book Rome")
        snapshot = app.wait_idle(session, 1, timeout=30)
        assert snapshot.messages[-1].text == (
            f"Results: get_weather=sunny in Rome; book_trip={APPROVAL_DEADLINE_PASSED}"
        )
        assert app.entries("tool", "book_trip") == []
        assert not app.client.resolve_interrupt(session, "k1", approved=True)
    finally:
        app.stop()


def test_message_sent_during_a_turn_is_queued(app: WorkerApp, matrix: MatrixExpectations) -> None:
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    assert app.client.send_user_message(session, "hello")
    queued = app.client.get_snapshot(session)
    assert queued.queued_message_count == 1
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    snapshot = app.wait_idle(session, 2)
    texts = [m.text for m in snapshot.messages if m.role is MessageRole.USER]
    assert texts == ["book Rome", "hello"]
    # The second turn's model call saw the whole first turn and the new message,
    # in as many messages as the framework stores for it.
    assert snapshot.messages[-1].text == f"I have seen {matrix.messages_after_booking} messages."
    assert [len(shape) for shape in app.shapes(session)][1] == 1


def _kill_during_single_attempt_write(app: WorkerApp, options: StartFlowOptions | None) -> None:
    session = app.start("charge me", options=options)
    wait_until(lambda: len(app.entries("tool", "charge")) == 1, what="the charge to start")
    app.restart_worker()  # SIGKILL mid-call, then a fresh Worker
    app.gate("charge").touch()  # a second run would now finish at once
    done = app.wait_idle(session, 1, timeout=60)
    assert len(app.entries("tool", "charge")) == 1
    resumed = app.entries("model")[-1]
    assert resumed["results"] == {"p1": OUTCOME_UNKNOWN_RESULT}
    assert done.messages[-1].text == f"Results: charge={OUTCOME_UNKNOWN_RESULT}"
    assert_step_shape(
        app.history(session),
        ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"],
    )


def test_sigkill_during_single_attempt_tool_records_outcome_unknown(private_app: WorkerApp) -> None:
    _kill_during_single_attempt_write(private_app, None)


def test_async_durability_default_never_reruns_single_attempt_write(private_app: WorkerApp) -> None:
    options = StartFlowOptions(config_override=FlowConfig(step_durability=StepDurability.ASYNC))
    _kill_during_single_attempt_write(private_app, options)


def test_sigkill_during_run_model_reruns_only_that_model_call(private_app: WorkerApp) -> None:
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    app.restart_worker()
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=60)
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    models = app.entries("model")
    assert [bool(e["results"]) for e in models] == [False, True, True]
    assert len(app.entries("tool", "get_weather")) == 1
    assert_step_shape(app.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])


def test_failed_turn_after_write_leaves_note_and_write_is_not_repeated(app: WorkerApp) -> None:
    session = app.start("fail after charging")
    failed = app.wait_idle(session, 1, timeout=60)
    assert failed.state is not None
    assert failed.state.last_turn_error is not None
    assert "model unavailable" in failed.state.last_turn_error
    note = failed.messages[-1]
    assert note.role is MessageRole.USER
    assert note.text == (
        "[Dex] The previous turn failed after these tool calls ran:\n"
        '- charge_now {"usd":5} -> succeeded: charged 5 USD\n'
        "Do not repeat these tool calls unless the user asks again."
    )
    # The runner's unfinished-turn messages (call and result) come before the note.
    assert [(m.role, m.tool_call_id) for m in failed.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "f1"),
        (MessageRole.TOOL, "f1"),
        (MessageRole.USER, None),
    ]
    assert len([e for e in app.entries("model") if e["results"]]) == 3  # three attempts
    assert app.client.send_user_message(session, "did it work?")
    done = app.wait_idle(session, 2)
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert len(app.entries("tool", "charge_now")) == 1
    assert note.text in app.entries("model")[-1]["prompts"]
    assert_step_shape(
        app.history(session),
        ["RunModel", "CallSingleAttemptTool", "ResumeTurn", "RecordTurnFailure"],
    )


def test_structured_output_with_a_validator_retry_is_two_run_model_steps(
    app: WorkerApp, matrix: MatrixExpectations
) -> None:
    session = app.start("city of light?")
    snapshot = app.wait_idle(session, 1)
    (shape,) = app.shapes(session)
    assert shape == ["RunModel", "RunModel"]  # the retry is a Step of its own (TurnContinued)
    assert len(app.entries("model")) == 2
    answers = [m for m in snapshot.messages if m.role is MessageRole.ASSISTANT]
    if matrix.structured_output_as_text:
        assert [json.loads(m.text or "")["name"] for m in answers] == ["paris", "Paris"]
        roles = [m.role for m in snapshot.messages]
        assert roles == [MessageRole.USER, MessageRole.ASSISTANT] * 2
        assert "Capitalize the city name." in (snapshot.messages[2].text or "")
    else:
        assert [json.loads(m.tool_arguments or "")["name"] for m in answers] == ["paris", "Paris"]
        tool_outputs = [m.tool_output for m in snapshot.messages if m.role is MessageRole.TOOL]
        assert tool_outputs[0] is not None
        assert "Capitalize the city name." in tool_outputs[0]
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 2


def test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps(app: WorkerApp) -> None:
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    app.client.resolve_interrupt(session, "k1", approved=True)
    app.wait_idle(session, 1)
    (shape,) = app.shapes(session)
    # RunModel ran no tool: the ungated-looking READ call ran in CallTool, the gated
    # write in CallSingleAttemptTool after its approval.
    assert shape[0] == "RunModel"
    assert sorted(shape[1:-2]) == ["AwaitToolApproval", "CallSingleAttemptTool", "CallTool"]
    assert shape[-2:] == ["ResumeTurn", "RunModel"]
    assert len(app.entries("tool", "get_weather")) == 1
    assert len(app.entries("tool", "book_trip")) == 1
