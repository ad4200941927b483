"""Matrix items 2, 3, 4 and 7, plus tool failures and retries."""

from __future__ import annotations

import json
from pathlib import Path

from dex import DexServiceError
from dex_agents import AgentSessionError, ToolPolicy
from dex_agents.results import OUTCOME_UNKNOWN_RESULT, USER_REJECTED_RESULT
from dex_agents_contracts import AgentStatus, ToolCallStatus, ToolEffect
from dex_agents_testing import (
    ModelReply,
    ScriptedTool,
    ScriptedToolCall,
    assert_step_shape,
    wait_until,
)
from helpers import HarnessFactory

LOOKUP = ScriptedTool(name="lookup", effect=ToolEffect.READ, output="42")
SEND = ScriptedTool(name="send_email", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


def _calls(*pairs: tuple[str, str]) -> ModelReply:
    return ModelReply(tool_calls=[ScriptedToolCall(tool_call_id=i, tool_name=n) for i, n in pairs])


def test_parallel_tool_calls_run_as_parallel_steps(harness: HarnessFactory, tmp_path: Path) -> None:
    gate_a, gate_b = tmp_path / "a", tmp_path / "b"
    h = harness(
        script=[[_calls(("c1", "slow_a"), ("c2", "slow_b")), ModelReply(text="done")]],
        tools=[
            ScriptedTool(name="slow_a", output="A", gate=str(gate_a)),
            ScriptedTool(name="slow_b", output="B", gate=str(gate_b)),
        ],
    )
    session = h.start("go")
    # Both tools are running at once: each waits for its gate, opened only now.
    wait_until(lambda: h.log.count("tool") == 2, what="both tools to start")
    gate_a.touch()
    gate_b.touch()
    h.wait_idle(session, 1)
    assert_step_shape(
        h.history(session), ["RunModel", ("CallTool", "CallTool"), "ResumeTurn", "RunModel"]
    )
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"c1": "A", "c2": "B"}


def test_approval_waits_beside_read_tool_survives_worker_restart_and_runs_once(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[[_calls(("w1", "send_email"), ("r1", "lookup")), ModelReply(text="done")]],
        tools=[SEND, LOOKUP],
    )
    session = h.start("email them")
    waiting = h.wait_snapshot(
        session,
        lambda s: (
            bool(s.pending_interrupts)
            and any(
                t.tool_call_id == "r1" and t.status is ToolCallStatus.SUCCEEDED
                for t in s.tool_calls
            )
        ),
        what="the approval to wait beside a finished read",
    )
    assert [i.interrupt_id for i in waiting.pending_interrupts] == ["w1"]
    assert waiting.state is not None
    assert waiting.state.status is AgentStatus.RUNNING_TOOLS
    h.restart_worker()  # SIGKILL while the approval waits
    assert h.client.resolve_interrupt(session, "w1", approved=True)
    done = h.wait_idle(session, 1)
    assert h.log.count("tool", name="send_email") == 1
    assert h.log.count("tool", name="lookup") == 1
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"w1": "sent", "r1": "42"}
    events = {e.type: json.loads(e.payload) for e in h.events(session, "turn_completed")}
    assert events["interrupt_raised"] == {
        "interrupt_id": "w1",
        "tool_call_id": "w1",
        "tool_name": "send_email",
        "deadline": None,
        "kind": "tool_approval",
        "question": None,
        "choices": [],
        "allows_free_text": True,
    }
    assert events["interrupt_resolved"] == {
        "interrupt_id": "w1",
        "approved": True,
        "rejection_message": None,
        "kind": "tool_approval",
        "answered": False,
        "cancellation_reason": None,
    }
    assert done.messages[-1].text == "done"
    assert_step_shape(
        h.history(session),
        [
            "RunModel",
            "CallTool",
            "AwaitToolApproval",
            "CallSingleAttemptTool",
            "ResumeTurn",
            "RunModel",
        ],
    )


def test_rejected_write_never_runs_and_model_sees_rejection(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [_calls(("w1", "send_email")), ModelReply(text="ok, not sent")],
            [_calls(("w2", "send_email")), ModelReply(text="ok")],
        ],
        tools=[SEND],
    )
    session = h.start("email them")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    assert h.client.resolve_interrupt(
        session, "w1", approved=False, rejection_message="Not to that address."
    )
    h.wait_idle(session, 1)
    assert h.client.send_user_message(session, "try again")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the second approval")
    assert h.client.resolve_interrupt(session, "w2", approved=False)
    h.wait_idle(session, 2)
    assert h.log.count("tool") == 0
    first = h.log.entries("model", turn="turn-1", call=1)[0]
    assert first["tool_results"] == {"w1": "Not to that address."}
    second = h.log.entries("model", turn="turn-2", call=1)[0]
    assert second["tool_results"] == {"w2": USER_REJECTED_RESULT}
    assert_step_shape(
        h.history(session), ["RunModel", "AwaitToolApproval", "ResumeTurn", "RunModel"]
    )


def test_resolve_interrupt_twice_is_false_and_deadline_rejects(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_calls(("w1", "send_email")), ModelReply(text="fine")]] * 2,
        tools=[SEND],
        interrupt_deadline_seconds=1.0,
    )
    session = h.start("email them")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    # The deadline passes: the call is rejected without running.
    done = h.wait_idle(session, 1, timeout=30)
    assert h.log.count("tool") == 0
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"w1": "approval deadline passed"}
    assert not done.pending_interrupts
    assert h.client.resolve_interrupt(session, "w1", approved=True) is False

    h2 = harness(script=[[_calls(("w1", "send_email")), ModelReply(text="fine")]], tools=[SEND])
    other = h2.start("email them")
    h2.wait_snapshot(other, lambda s: bool(s.pending_interrupts), what="the approval")
    assert h2.client.resolve_interrupt(other, "w1", approved=True) is True
    assert h2.client.resolve_interrupt(other, "w1", approved=True) is False
    assert h2.client.resolve_interrupt(other, "w1", approved=False) is False
    h2.wait_idle(other, 1)
    assert h2.log.count("tool", name="send_email") == 1


def test_tool_error_is_visible_and_not_retried(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_calls(("c1", "broken")), ModelReply(text="sorry")]],
        tools=[ScriptedTool(name="broken", error="disk full")],
    )
    session = h.start("go")
    h.wait_idle(session, 1)
    assert h.log.count("tool") == 1
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"] == {"c1": "The tool call failed: disk full"}


def test_crashing_tools_retry_with_one_key_then_record_by_effect(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [
                _calls(("r1", "flaky_read"), ("r2", "dead_read"), ("i1", "dead_write")),
                ModelReply(text="done"),
            ]
        ],
        tools=[
            ScriptedTool(name="flaky_read", output="fine", crash_attempts=1),
            ScriptedTool(name="dead_read", crash_attempts=99),
            ScriptedTool(name="dead_write", effect=ToolEffect.IDEMPOTENT_WRITE, crash_attempts=99),
        ],
    )
    session = h.start("go")
    h.wait_idle(session, 1, timeout=60)
    flaky = h.log.entries("tool", name="flaky_read")
    assert [e["attempt"] for e in flaky] == [1, 2]
    assert {e["key"] for e in flaky} == {f"{session}/turn-1/r1"}
    assert h.log.count("tool", name="dead_read") == 3
    assert h.log.count("tool", name="dead_write") == 3
    (resumed,) = h.log.entries("model", call=1)
    assert resumed["tool_results"]["r1"] == "fine"
    assert resumed["tool_results"]["r2"].startswith("The tool call failed: ")
    assert "scripted tool crash on attempt 3" in resumed["tool_results"]["r2"]
    assert resumed["tool_results"]["i1"] == OUTCOME_UNKNOWN_RESULT
    shape = h.shapes(session)[0]
    assert shape.count("RecordToolFailure") == 2
    assert shape[0] == "RunModel"
    assert shape[-2:] == ["ResumeTurn", "RunModel"]


def test_policy_overrides_effect_and_approval(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_calls(("w1", "send_email")), ModelReply(text="sent it")]],
        tools=[SEND],
        tool_policies={"send_email": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)},
    )
    session = h.start("email them")
    h.wait_idle(session, 1)
    assert h.log.count("tool", name="send_email") == 1
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])


def test_approval_survives_a_dexlite_sigkill(private_harness: HarnessFactory) -> None:
    h = private_harness(
        script=[[_calls(("w1", "send_email")), ModelReply(text="done")]], tools=[SEND]
    )
    session = h.start("email them")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="the approval")
    h.server.kill()
    h.server.start()  # same port and database

    def worker_back() -> bool:
        # RPCs run on the Worker: they answer once its pull streams reconnected.
        try:
            return bool(h.snapshot(session).pending_interrupts)
        except (DexServiceError, AgentSessionError):
            return False

    wait_until(worker_back, timeout=60, what="the Worker to reconnect")
    assert h.client.resolve_interrupt(session, "w1", approved=True)
    h.wait_idle(session, 1, timeout=60)
    assert h.log.count("tool", name="send_email") == 1
