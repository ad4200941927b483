"""The design's matrix through the real path for the TypeScript Claude Agent SDK harness:
dexlite, a Python Worker child whose session Flow runs on a `RemoteRunner`, and the Node
sidecar serving `ClaudeAgentRunner` (@dex-agents/claude-agent-sdk on the real bundled
Claude Code CLI, its model a scripted loopback Messages API in the sidecar,
typescript/adapters/claude-agent-sdk/src/testing/matrix_sidecar.ts).

A whole-turn harness runs a turn's inline reads inside RunModel, so, as in the Python
adapter's integration tests, the items whose Step shape has a CallTool for a read are
this module's own versions (same prompts, same checks, the harness's shapes); the
items that involve only writes are `dex_agents_testing.matrix`'s, collected unchanged.
The sidecar SIGKILLs kill the Node process group (the CLI with it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dex_agents.runner import OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentSnapshot, MessageRole
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.matrix import (
    test_approval_deadline_rejects_the_call,
    test_async_durability_default_never_reruns_single_attempt_write,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
)
from dex_agents_testing.processes import wait_until
from dex_agents_testing.worker_apps import WorkerApp
from remote_matrix import app, dexlite, make_app, private_app, sidecar_of
from remote_sidecar import build_package

__all__ = [
    "app",
    "dexlite",
    "make_app",
    "private_app",
    "test_approval_deadline_rejects_the_call",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
]


@pytest.fixture(scope="module")
def sidecar_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("ts")
    return build_package(
        work, "typescript/adapters/claude-agent-sdk", ["typescript/contracts", "typescript/core"]
    )


@pytest.fixture
def flow_type_prefix() -> str:
    return "Claude"


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
    # The resumed RunModel fed the booking's record back and did not repeat the read.
    assert len(app.entries("tool", "get_weather")) == 1
    assert app.shapes(session) == [
        ["RunModel", "AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]
    ]


def _pending(snapshot: AgentSnapshot) -> list[str]:
    return [i.tool_call_id for i in snapshot.pending_interrupts]


def test_two_writes_of_one_response_run_one_tool_step_each_in_order(app: WorkerApp) -> None:
    session = app.start("two bookings")
    app.wait(session, "k1's approval", lambda s: _pending(s) == ["k1"])
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    # The second write is asked about only after the first ran.
    app.wait(session, "q1's approval", lambda s: _pending(s) == ["q1"])
    assert [e["key"] for e in app.entries("tool", "book_trip")] == [f"{session}/turn-1/k1"]
    assert app.client.resolve_interrupt(session, "q1", approved=True)
    snapshot = app.wait_idle(session, 1)
    assert snapshot.messages[-1].text == "Results: book_trip=booked Rome; book_trip=booked Oslo"
    assert [e["key"] for e in app.entries("tool", "book_trip")] == [
        f"{session}/turn-1/k1",
        f"{session}/turn-1/q1",
    ]
    # Two model calls: the response, and the answer that saw both results.
    assert [e["results"] for e in app.entries("model")] == [
        {},
        {"k1": "booked Rome", "q1": "booked Oslo"},
    ]
    one_write = ["AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]
    assert app.shapes(session) == [["RunModel", *one_write, *one_write]]


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


def test_sigkill_of_the_sidecar_mid_run_model_repeats_the_turn_and_its_inline_read(
    private_app: WorkerApp,
) -> None:
    """Item 6 for the harness: the retried RunModel repeats the whole turn so far, the
    inline read included (at least once, as documented), and nothing else."""
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    sidecar = sidecar_of(app)
    sidecar.kill()  # mid-CLI run, in Node (the CLI is in the sidecar's process group)
    sidecar.start()
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=90)
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    assert [bool(e["results"]) for e in app.entries("model")] == [False, True, False, True]
    assert len(app.entries("tool", "get_weather")) == 2
    assert_step_shape(app.history(session), ["RunModel"])


def test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown(
    private_app: WorkerApp,
) -> None:
    app = private_app
    session = app.start("charge me")
    wait_until(lambda: len(app.entries("tool", "charge")) == 1, what="the charge to start")
    sidecar = sidecar_of(app)
    sidecar.kill()  # mid-tool, in Node
    sidecar.start()
    app.gate("charge").touch()  # a second run would now finish at once
    done = app.wait_idle(session, 1, timeout=90)
    assert len(app.entries("tool", "charge")) == 1
    assert app.entries("model")[-1]["results"] == {"p1": OUTCOME_UNKNOWN_RESULT}
    assert done.messages[-1].text == f"Results: charge={OUTCOME_UNKNOWN_RESULT}"
    assert_step_shape(
        app.history(session),
        ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"],
    )
