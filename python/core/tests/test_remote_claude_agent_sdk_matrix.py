"""The design's matrix through the real path for the TypeScript Claude Agent SDK harness:
dexlite, a Python Worker child whose session Flow runs on a `RemoteRunner`, and the Node
sidecar serving `ClaudeAgentRunner` (@dex-agents/claude-agent-sdk on the real bundled
Claude Code CLI, its model a scripted loopback Messages API in the sidecar,
typescript/adapters/claude-agent-sdk/src/testing/matrix_sidecar.ts).

The items with a read have the whole-turn harness's shapes
(`dex_agents_testing.harness_matrix`, which the Python adapter's suite runs too); the
items that involve only writes are `dex_agents_testing.matrix`'s. The sidecar SIGKILLs
kill the Node process group (the CLI with it)."""

from __future__ import annotations

from dex_agents_contracts import AgentSnapshot
from dex_agents_testing.harness_matrix import (
    test_approved_write_survives_worker_restart_and_runs_once,
    test_failed_turn_after_write_leaves_note_and_write_is_not_repeated,
    test_message_sent_during_a_turn_is_queued,
    test_parallel_reads_run_inline,
    test_read_tool_turn_is_one_run_model_and_replays_history,
    test_rejected_write_never_runs_and_the_model_sees_why,
)
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.matrix import (
    test_approval_deadline_rejects_the_call,
    test_async_durability_default_never_reruns_single_attempt_write,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
)
from dex_agents_testing.processes import wait_until
from dex_agents_testing.worker_apps import WorkerApp
from remote_matrix import (
    app,
    flow_type_prefix,
    make_app,
    private_app,
    sidecar_of,
    sidecar_package,
    test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown,
)

__all__ = [
    "app",
    "flow_type_prefix",
    "make_app",
    "private_app",
    "sidecar_package",
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_reads_run_inline",
    "test_read_tool_turn_is_one_run_model_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
]

SIDECAR_PACKAGE = "typescript/adapters/claude-agent-sdk"
FLOW_TYPE_PREFIX = "Claude"


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
