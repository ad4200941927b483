"""Tool tasks and compaction through the Node sidecar: dexlite, a Python Worker child
whose session Flow runs on a `RemoteRunner`, and the sidecar serving the
ScriptedTaskRunner of typescript/core/src/testing. The sidecar is SIGKILLed mid poll,
mid summary and mid cancel; its log (JSON lines synced per run) counts what ran in Node.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents.session._rules.turn_control import TASK_CANCELLED_ERROR
from dex_agents_contracts import (
    AgentSnapshot,
    AgentStatus,
    CancellationReason,
    MessageRole,
    ToolCallStatus,
)
from dex_agents_testing.history import assert_step_shape, step_types
from dex_agents_testing.processes import DexliteProcess
from remote_harness import Remote, running_remote

SCRIPT = Path(__file__).with_name("remote_task_flows.py")
CANCELLED_RECORD = {
    "status": int(ToolCallStatus.OUTCOME_UNKNOWN),
    "error": TASK_CANCELLED_ERROR,
    "cancellation_reason": int(CancellationReason.TURN_CANCELLED),
}
CANCELLED_TAIL = ["FinishTurnCancellation", "CancelToolTask", "ResumeTurn", "ApplyTurnControl"]


@dataclass
class TaskRemote(Remote):
    """The sidecar serving the ScriptedTaskRunner, and the Worker app on it."""

    def start(self, text: str, **settings: object) -> str:
        session = f"s-{uuid.uuid4().hex[:12]}"
        client = self.app.client
        self.app.runs[session] = client.start_session(session, text, session_settings=settings)
        return session

    def polling(self, session: str, tool_call_id: str, interval: int) -> AgentSnapshot:
        """The snapshot once the task's record waits to be polled again in `interval` s."""
        return self.app.wait(
            session,
            f"task {tool_call_id} waiting {interval} s",
            lambda s: any(
                t.tool_call_id == tool_call_id
                and t.status is ToolCallStatus.WAITING_FOR_TASK
                and t.task_poll_interval_seconds == interval
                for t in s.tool_calls
            ),
        )

    def say(self, session: str, first: int, last: int) -> AgentSnapshot:
        """Turns `first`..`last` of plain text, each waited for."""
        snapshot = self.app.client.get_snapshot(session)
        for n in range(first, last + 1):
            if n > 1:
                assert self.app.client.send_user_message(session, f"hello {n}")
            snapshot = self.app.wait_idle(session, n)
        return snapshot


@pytest.fixture
def remote(
    dexlite: DexliteProcess, core_package: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[TaskRemote]:
    with running_remote(
        dexlite,
        core_package,
        tmp_path,
        monkeypatch,
        script=SCRIPT,
        flow_type_prefix="Tasks",
        sidecar_args=["--runner", "tasks"],
    ) as (sidecar, app):
        yield TaskRemote(sidecar, app)


def _tool_outputs(snapshot: AgentSnapshot, tool_call_id: str) -> list[str]:
    return [
        m.tool_output
        for m in snapshot.messages
        if m.role is MessageRole.TOOL and m.tool_call_id == tool_call_id and m.tool_output
    ]


# --- tool tasks ----------------------------------------------------------------------


def test_a_tool_task_is_polled_in_node_until_its_result(remote: TaskRemote) -> None:
    app = remote.app
    session = app.start("job 2")
    snapshot = app.wait_idle(session, 1)
    result = "job done; 2 polls said running"
    assert snapshot.messages[-1].text == f"Results: job={result}"
    assert _tool_outputs(snapshot, "j1") == [result]
    assert_step_shape(
        app.history(session),
        [
            "RunModel",
            "CallTool",
            "PollToolTask",
            "PollToolTask",
            "PollToolTask",
            "ResumeTurn",
            "RunModel",
        ],
    )
    key = f"{session}/turn-1/j1"
    (tool,) = remote.runs("tool")
    assert (tool["key"], tool["supports_tool_tasks"]) == (key, True)
    assert remote.runs("task_start") == [{"kind": "task_start", "task_id": "job-j1", "key": key}]
    polls = remote.runs("poll")
    assert [(p["index"], p["attempt"], p["task_id"], p["key"]) for p in polls] == [
        (0, 1, "job-j1", key),
        (1, 1, "job-j1", key),
        (2, 1, "job-j1", key),
    ]
    # The model call after the task saw its result.
    first, resumed = remote.runs("model")
    assert first["tool_results"] == {}
    assert resumed["tool_results"] == {"j1": result}
    events = app.events(session, "turn_completed")
    started = [json.loads(e.payload) for e in events if e.type == "tool_task_started"]
    assert started == [{"tool_call_id": "j1", "tool_name": "job", "task_id": "job-j1"}]


def test_cancel_turn_cancels_each_running_task_once_in_node(remote: TaskRemote) -> None:
    app = remote.app
    session = app.start("job forever")
    for turn in (1, 2):
        tool_call_id = f"j{turn}"
        remote.polling(session, tool_call_id, 3600)
        assert app.client.cancel_turn(session)
        done = app.wait_idle(session, turn)
        assert _tool_outputs(done, tool_call_id) == [OUTCOME_UNKNOWN_RESULT]
        (unfinished,) = remote.runs("unfinished", turn=f"turn-{turn}")
        assert unfinished["records"] == {tool_call_id: CANCELLED_RECORD}
        if turn == 1:
            assert app.client.send_user_message(session, "job forever")
    # One cancel per task, each finished, and no job ever reported done.
    cancels = remote.runs("cancel_task")
    assert [(c["task_id"], c["key"], c["attempt"]) for c in cancels] == [
        ("job-j1", f"{session}/turn-1/j1", 1),
        ("job-j2", f"{session}/turn-2/j2", 1),
    ]
    assert len(remote.runs("cancel_done")) == 2
    assert [p["task_id"] for p in remote.runs("poll")] == ["job-j1", "job-j2"]
    assert remote.runs("job_done") == []
    history = app.history(session)
    types = step_types(history)
    assert types.count("CancelToolTask") == 2
    assert types[-len(CANCELLED_TAIL) :] == CANCELLED_TAIL
    events = [e.type for e in app.events(session, "turn_cancelled", count=2)]
    assert events.count("turn_cancelled") == 2
    assert "turn_completed" not in events


def test_failing_polls_take_the_failure_route_of_their_effect(remote: TaskRemote) -> None:
    app = remote.app
    failing, crashing, crashing_write = (
        app.start(f"job {mode}") for mode in ("fail", "crash", "crash-write")
    )
    results = {}
    for session in (failing, crashing, crashing_write):
        snapshot = app.wait_idle(session, 1, timeout=90)
        (results[session],) = _tool_outputs(snapshot, "j1")
        # The resumed model call saw the result.
        assert len(remote.runs("model", tool_results={"j1": results[session]})) == 1
        assert (snapshot.messages[-1].text or "").endswith(results[session])
    # A ToolExecutionError is the model's to see, at once; a crash is retried by the
    # poll's policy (3 attempts), then routed by the call's effect.
    assert results[failing] == "The tool call failed: the job failed"
    assert results[crashing].startswith("The tool call failed: ")
    assert "RangeError: the job's poll crashed on attempt 3" in results[crashing]
    assert results[crashing_write] == OUTCOME_UNKNOWN_RESULT

    def attempts(session: str) -> list[int]:
        return [p["attempt"] for p in remote.runs("poll", key=f"{session}/turn-1/j1")]

    assert attempts(failing) == [1]
    assert attempts(crashing) == [1, 2, 3]
    assert attempts(crashing_write) == [1, 2, 3]
    assert_step_shape(
        app.history(failing), ["RunModel", "CallTool", "PollToolTask", "ResumeTurn", "RunModel"]
    )
    # A poll that never succeeded leaves only its failure route in the shape.
    assert_step_shape(
        app.history(crashing),
        ["RunModel", "CallTool", "RecordToolFailure", "ResumeTurn", "RunModel"],
    )
    assert_step_shape(
        app.history(crashing_write),
        ["RunModel", "CallSingleAttemptTool", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"],
    )
    assert remote.runs("job_done") == []


def test_task_intervals_beyond_the_wire_are_capped_and_nan_is_refused(remote: TaskRemote) -> None:
    app = remote.app
    huge, nan = app.start("job huge"), app.start("job nan")
    # 1e12 s reached the wire as the int32 maximum of milliseconds (about 24.9 days),
    # which the session rounds down to its one-day ceiling.
    remote.polling(huge, "j1", 86_400)
    assert app.client.cancel_turn(huge)
    cancelled = app.wait_idle(huge, 1)
    assert _tool_outputs(cancelled, "j1") == [OUTCOME_UNKNOWN_RESULT]
    assert remote.runs("poll", key=f"{huge}/turn-1/j1") == []
    # NaN has no wire value: each attempt is a failure frame naming it, and the read's
    # failure route tells the model.
    refused = app.wait_idle(nan, 1, timeout=60)
    (output,) = _tool_outputs(refused, "j1")
    assert output.startswith("The tool call failed: ")
    assert "a task_started outcome's pollIntervalSeconds must be a number, got NaN" in output
    key = f"{nan}/turn-1/j1"
    assert [t["attempt"] for t in remote.runs("tool", key=key)] == [1, 2, 3]
    assert remote.runs("poll", key=key) == []
    assert_step_shape(app.history(nan), ["RunModel", "RecordToolFailure", "ResumeTurn", "RunModel"])


# --- compaction ----------------------------------------------------------------------


def test_compaction_twice_folds_sidecar_summaries(remote: TaskRemote) -> None:
    app = remote.app
    session = app.start("hello 1")
    snapshot = remote.say(session, 1, 5)
    summary = snapshot.context_summary
    assert summary is not None
    assert (summary.generation, summary.first_sequence, summary.last_sequence) == (2, 1, 8)
    assert summary.text == "sidecar summary 2 of summary 1 and messages 5..8"
    shapes = app.shapes(session)
    assert [i for i, s in enumerate(shapes) if "CompactContext" in s] == [2, 4]
    assert shapes[2] == shapes[4] == ["RunModel", "CompactContext", "RunModel"]
    # Each summary call got only the messages after the previous summary.
    first, second = remote.runs("summary")
    assert (first["through"], first["messages"], first["previous"]) == (4, [1, 2, 3, 4], None)
    assert (second["through"], second["messages"], second["previous"]) == (
        8,
        [5, 6, 7, 8],
        "sidecar summary 1 of messages 1..4",
    )
    # Node estimated every model input (100 tokens a message): at 500 it compacted,
    # and RunModel estimated again over the messages the new summary left.
    estimates = [(e["turn"], e["tokens"]) for e in remote.runs("estimate")]
    assert estimates == [
        ("turn-1", 100),
        ("turn-2", 300),
        ("turn-3", 500),
        ("turn-3", 100),
        ("turn-4", 300),
        ("turn-5", 500),
        ("turn-5", 100),
    ]
    # The cutoffs came from Node with the policy's retained budget (20% of 1000).
    assert {c["budget"] for c in remote.runs("cutoff")} == {200}
    # The model calls after each compaction saw the new summary and only newer messages.
    models = remote.runs("model")
    assert len(models) == 5  # one per turn: compacting made no model call of the turn
    assert (models[2]["summary"], models[2]["messages"]) == (
        "sidecar summary 1 of messages 1..4",
        [5],
    )
    assert (models[4]["summary"], models[4]["messages"]) == (summary.text, [9])
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 7  # five turns and two summaries
    events = app.events(session, "compaction_finished", count=2)
    finished = [json.loads(e.payload) for e in events if e.type == "compaction_finished"]
    assert finished == [
        {"generation": 1, "through_sequence": 4},
        {"generation": 2, "through_sequence": 8},
    ]


# --- the sidecar SIGKILLed -----------------------------------------------------------


def test_sigkill_of_the_sidecar_mid_poll_polls_again_without_a_second_task(
    remote: TaskRemote,
) -> None:
    app = remote.app
    session = app.start("job hold-poll")
    remote.wait_runs("poll", 1)
    remote.restart_sidecar()
    # The poll's attempt failed with the connection; its retry reached the new sidecar.
    assert [p["attempt"] for p in remote.wait_runs("poll", 2)] == [1, 2]
    remote.open_gate("poll")
    snapshot = app.wait_idle(session, 1, timeout=60)
    assert snapshot.messages[-1].text == "Results: job=job done; 0 polls said running"
    assert len(remote.runs("tool")) == len(remote.runs("task_start")) == 1
    assert len(remote.runs("poll")) == 2
    assert len(remote.runs("job_done")) == 1
    assert_step_shape(
        app.history(session), ["RunModel", "CallTool", "PollToolTask", "ResumeTurn", "RunModel"]
    )


def test_sigkill_of_the_sidecar_after_the_task_checkpoint_returns_the_same_task(
    remote: TaskRemote,
) -> None:
    app = remote.app
    session = app.start("job hold-start")
    # The event follows the checkpoint's heartbeat frame, so Dex holds the checkpoint.
    app.events(session, "scripted.task_checkpointed")
    remote.restart_sidecar()  # before the tool returned ToolTaskStarted
    (resumed,) = remote.wait_runs("task_resume", 1)
    assert (resumed["task_id"], resumed["attempt"]) == ("job-j1", 2)
    snapshot = app.wait_idle(session, 1, timeout=60)
    assert snapshot.messages[-1].text == "Results: job=job done; 0 polls said running"
    assert [t["attempt"] for t in remote.runs("tool")] == [1, 2]
    assert len(remote.runs("task_start")) == 1
    assert [p["task_id"] for p in remote.runs("poll")] == ["job-j1"]
    assert_step_shape(
        app.history(session), ["RunModel", "CallTool", "PollToolTask", "ResumeTurn", "RunModel"]
    )


def test_sigkill_of_the_sidecar_mid_summary_reruns_only_the_summary(remote: TaskRemote) -> None:
    app = remote.app
    session = remote.start("hello 1", holdSummary=True)
    remote.say(session, 1, 2)
    assert app.client.send_user_message(session, "hello 3")
    remote.wait_runs("summary", 1)
    snapshot = app.client.get_snapshot(session)
    assert snapshot.state is not None
    assert snapshot.state.status is AgentStatus.COMPACTING_CONTEXT
    remote.restart_sidecar()
    assert [s["attempt"] for s in remote.wait_runs("summary", 2)] == [1, 2]
    remote.open_gate("summary")
    snapshot = app.wait_idle(session, 3, timeout=60)
    assert snapshot.context_summary is not None
    assert snapshot.context_summary.generation == 1
    assert snapshot.context_summary.text == "sidecar summary 1 of messages 1..4"
    assert len(remote.runs("model")) == 3  # one model call per turn: none repeated
    assert app.shapes(session)[2] == ["RunModel", "CompactContext", "RunModel"]
    assert snapshot.messages[-1].text == "I have seen 1 messages."


def test_sigkill_of_the_sidecar_mid_cancel_retries_the_cancel(remote: TaskRemote) -> None:
    app = remote.app
    session = app.start("job hold-cancel")
    remote.polling(session, "j1", 3600)
    assert app.client.cancel_turn(session)
    remote.wait_runs("cancel_task", 1)
    remote.restart_sidecar()
    assert [c["attempt"] for c in remote.wait_runs("cancel_task", 2)] == [1, 2]
    remote.open_gate("cancel")
    done = app.wait_idle(session, 1, timeout=60)
    assert [c["attempt"] for c in remote.runs("cancel_done")] == [2]
    assert {c["task_id"] for c in remote.runs("cancel_task")} == {"job-j1"}
    assert _tool_outputs(done, "j1") == [OUTCOME_UNKNOWN_RESULT]
    (unfinished,) = remote.runs("unfinished")
    assert unfinished["records"] == {"j1": CANCELLED_RECORD}
    assert remote.runs("job_done") == []
    types = step_types(app.history(session))
    assert types[types.index("FinishTurnCancellation") :] == CANCELLED_TAIL
