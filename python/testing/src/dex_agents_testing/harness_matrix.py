"""The design's matrix, 1 to 11, for a whole-turn harness: now only the TypeScript
Claude Agent SDK adapter's remote matrix runs these (the Python one runs
`dex_agents_testing.conformance` with its `harness` expectations). The harness
runs a turn's inline reads inside RunModel, so the items whose Step shape has a
CallTool for a read have the harness's shapes here;
the items that involve only writes are `dex_agents_testing.matrix`'s.

A suite imports these tests into a test module with an `app` fixture (a `WorkerApp`)
whose scripted Messages API follows matrix.py's prompts, its tools served under the
SDK server `app` (so the model sees `mcp__app__<name>`).

| Item | Test |
|---|---|
| 1, 11 | test_read_tool_turn_is_one_run_model_and_replays_history |
| 2 | test_parallel_reads_run_inline |
| 3 | test_approved_write_survives_worker_restart_and_runs_once |
| 4, 7 | test_rejected_write_never_runs_and_the_model_sees_why |
| 8 | test_failed_turn_after_write_leaves_note_and_write_is_not_repeated |
| 10 | test_message_sent_during_a_turn_is_queued |
"""

from __future__ import annotations

from dex_agents_contracts import AgentSnapshot, MessageRole

from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.worker_apps import WorkerApp

__all__ = [
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_reads_run_inline",
    "test_read_tool_turn_is_one_run_model_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
]


def _awaiting_approval(snapshot: AgentSnapshot) -> bool:
    return any(i.tool_call_id == "k1" for i in snapshot.pending_interrupts)


def test_read_tool_turn_is_one_run_model_and_replays_history(app: WorkerApp) -> None:  # 1, 11
    session = app.start("weather in Paris?")
    first = app.wait_idle(session, 1)
    assert [m.role for m in first.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert first.messages[1].tool_name == "mcp__app__get_weather"
    assert first.messages[2].tool_output == "sunny in Paris"
    assert first.messages[3].text == "Results: get_weather=sunny in Paris"
    assert first.usage is not None
    assert first.usage.model_calls == 2

    assert app.client.send_user_message(session, "thanks")
    second = app.wait_idle(session, 2)
    last = app.entries("model")[-1]
    # The second turn's one model call saw the first turn, resumed from the transcript.
    assert last["prompts"] == ["weather in Paris?", "thanks"]
    assert second.messages[-1].text == f"I have seen {last['items']} messages."
    history = app.history(session)
    assert_step_shape(history, ["RunModel"], turn=0)
    assert_step_shape(history, ["RunModel"], turn=1)
    (run,) = app.entries("tool", "get_weather")
    assert run["key"] is None  # an inline read runs in RunModel, not in a tool Step
    assert len(app.entries("model")) == 3


def test_parallel_reads_run_inline(app: WorkerApp) -> None:  # item 2
    session = app.start("parallel weather")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Oslo; get_weather=sunny in Lima"
    )
    assert app.shapes(session) == [["RunModel"]]
    assert len(app.entries("tool", "get_weather")) == 2


def test_approved_write_survives_worker_restart_and_runs_once(app: WorkerApp) -> None:  # 3
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    assert app.entries("tool", "book_trip") == []
    app.kill_worker()
    app.start_worker()
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == (
        "Results: get_weather=sunny in Rome; book_trip=booked Rome"
    )
    (booking,) = app.entries("tool", "book_trip")
    assert booking["key"] == f"{session}/turn-1/k1"
    # The resumed RunModel answered the booking from its record and did not repeat the read.
    assert len(app.entries("tool", "get_weather")) == 1
    assert app.shapes(session) == [
        ["RunModel", "AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]
    ]


def test_rejected_write_never_runs_and_the_model_sees_why(app: WorkerApp) -> None:  # 4, 7
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


def test_failed_turn_after_write_leaves_note_and_write_is_not_repeated(
    app: WorkerApp,
) -> None:  # item 8
    session = app.start("fail after charging")
    failed = app.wait_idle(session, 1, timeout=120)
    assert failed.state is not None
    assert failed.state.last_turn_error is not None
    assert "model unavailable" in failed.state.last_turn_error
    note = failed.messages[-1]
    assert note.role is MessageRole.USER
    assert note.text is not None
    assert note.text.startswith("[Dex] The previous turn failed after these tool calls ran:\n")
    assert "mcp__app__charge_now" in note.text
    assert "-> succeeded: charged 5 USD" in note.text
    shown = [(m.role, m.tool_call_id) for m in failed.messages]
    assert shown == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "f1"),
        (MessageRole.TOOL, "f1"),
        (MessageRole.USER, None),
    ], shown
    assert len([e for e in app.entries("model") if e["results"]]) == 3  # three attempts
    assert app.client.send_user_message(session, "did it work?")
    done = app.wait_idle(session, 2)
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert len(app.entries("tool", "charge_now")) == 1
    assert app.entries("model")[-1]["prompts"] == ["fail after charging", note.text, "did it work?"]
    assert_step_shape(
        app.history(session),
        ["RunModel", "CallSingleAttemptTool", "ResumeTurn", "RecordTurnFailure"],
    )


def test_message_sent_during_a_turn_is_queued(app: WorkerApp) -> None:  # item 10
    session = app.start("book Rome")
    app.wait(session, "the approval wait", _awaiting_approval)
    assert app.client.send_user_message(session, "hello")
    queued = app.client.get_snapshot(session)
    assert queued.queued_message_count == 1
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    snapshot = app.wait_idle(session, 2)
    texts = [m.text for m in snapshot.messages if m.role is MessageRole.USER]
    assert texts == ["book Rome", "hello"]
    last = app.entries("model")[-1]
    assert last["prompts"] == ["book Rome", "hello"]
    assert snapshot.messages[-1].text == f"I have seen {last['items']} messages."
    assert [len(shape) for shape in app.shapes(session)][1] == 1
