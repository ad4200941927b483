"""Steering: steer_user_message, delete_queued_message, ResumeTurn's control wake,
ApplyTurnControl, and the races between a steer and an approval."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from control_flows import scripted_config
from dex_agents.session._rules.turn_control import STEERED_NOTE_HEADER, SUPERSEDED_BY_STEER_RESULT
from dex_agents_contracts import (
    AgentSnapshot,
    AgentStatus,
    MessageRole,
    PendingUserMessage,
    ToolCallStatus,
    ToolEffect,
)
from dex_agents_testing import (
    ModelReply,
    RunLog,
    ScriptedRunner,
    ScriptedTool,
    ScriptedToolCall,
    step_types,
    wait_until,
)
from helpers import Harness, HarnessFactory

LOOKUP = ScriptedTool(name="lookup", effect=ToolEffect.READ, output="42")
SEND = ScriptedTool(name="send_email", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


def _calls(*pairs: tuple[str, str]) -> ModelReply:
    return ModelReply(tool_calls=[ScriptedToolCall(tool_call_id=i, tool_name=n) for i, n in pairs])


def _user_texts(snapshot: AgentSnapshot) -> list[str | None]:
    return [m.text for m in snapshot.messages if m.role is MessageRole.USER]


def _pending_texts(pending: Sequence[PendingUserMessage]) -> list[str]:
    return [p.message.text for p in pending if p.message is not None]


def _collapsed(types: list[str]) -> list[str]:
    """Step types with ResumeTurn's extra waits folded into its last one.

    A control wake that lands before the last tool result makes ResumeTurn wait
    once more, which is allowed; that wait can commit before or after the tool
    Step's own commit, so only the ResumeTurn that hands over is kept.
    """
    handovers = ("ResumeTurn", "ApplyTurnControl", "RunModel")

    def waits_again(index: int) -> bool:
        later = (t for t in types[index + 1 :] if t in handovers)
        return next(later, None) == "ResumeTurn"

    return [t for i, t in enumerate(types) if not (t == "ResumeTurn" and waits_again(i))]


def _interrupt_pending(h: Harness, session: str, interrupt_id: str) -> AgentSnapshot:
    return h.wait_snapshot(
        session,
        lambda s: any(i.interrupt_id == interrupt_id for i in s.pending_interrupts),
        what=f"interrupt {interrupt_id}",
    )


def test_steer_during_model_call_cancels_requested_tools_before_they_start(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "model"
    h = harness(
        script=[
            [ModelReply(gate=str(gate), tool_calls=_calls(("r1", "lookup")).tool_calls)],
            [ModelReply(text="going left")],
        ],
        tools=[LOOKUP],
    )
    session = h.start("go right")
    wait_until(lambda: h.log.count("model") == 1, what="the model call to start")
    assert h.client.steer_user_message(session, text="go left")
    held = h.snapshot(session)
    assert _pending_texts(held.steered_messages) == ["go left"]
    gate.touch()  # the call returns its tool request after the steer committed
    done = h.wait_idle(session, 2)

    assert h.log.count("tool") == 0  # the requested tool never started
    assert done.state is not None
    assert done.state.last_turn_error is None
    assert _user_texts(done) == ["go right", "go left"]
    assert done.messages[-1].text == "going left"
    tool_results = [m for m in done.messages if m.role is MessageRole.TOOL]
    assert [m.tool_output for m in tool_results] == [SUPERSEDED_BY_STEER_RESULT]
    assert h.snapshot(session).steered_messages == []
    types = [e.type for e in h.events(session, "turn_completed")]
    assert types.count("turn_steered") == 1
    assert types.index("turn_steered") < types.index("turn_completed")
    assert _collapsed(step_types(h.history(session))) == [
        "StartAgentSession",
        "RunModel",
        "CallTool",  # recorded cancelled before tool_call_started
        "ResumeTurn",
        "ApplyTurnControl",
        "RunModel",
    ]


def test_steer_abandons_a_waiting_approval_and_resolve_then_returns_false(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[[_calls(("w1", "send_email"))], [ModelReply(text="ok, not sending")]],
        tools=[SEND],
    )
    session = h.start("email them")
    pending = h.client.wait_for_interrupt(session, "w1")
    assert pending is not None
    assert pending.tool_call_id == "w1"
    assert h.client.steer_user_message(session, text="don't send it")
    done = h.wait_idle(session, 2)

    assert h.client.wait_for_interrupt(session, "w1", deadline_seconds=5) is None
    assert not h.client.resolve_interrupt(session, "w1", approved=True)
    assert h.log.count("tool") == 0
    assert done.pending_interrupts == []
    assert _user_texts(done) == ["email them", "don't send it"]
    events = h.events(session, "turn_completed")
    (resolved,) = [e for e in events if e.type == "interrupt_resolved"]
    assert '"cancellation_reason":"steered"' in resolved.payload
    (finished,) = [e for e in events if e.type == "tool_call_finished"]
    assert '"status":"rejected"' in finished.payload
    (model_turn2,) = h.log.entries("model", turn="turn-2")
    assert model_turn2["seen"][-1] == "don't send it"


def test_approval_that_commits_before_the_steer_wins(harness: HarnessFactory) -> None:
    h = harness(
        script=[[_calls(("w1", "send_email"))], [ModelReply(text="done")]],
        tools=[SEND],
    )
    session = h.start("email them")
    _interrupt_pending(h, session, "w1")
    assert h.client.resolve_interrupt(session, "w1", approved=True)  # committed first
    assert h.client.steer_user_message(session, text="actually, wait")
    done = h.wait_idle(session, 2)

    events = h.events(session, "turn_completed")
    resolutions = [e for e in events if e.type == "interrupt_resolved"]
    # The approval removed the interrupt, so steering had nothing to remove.
    assert len(resolutions) == 1
    assert '"approved":true' in resolutions[0].payload
    (finished,) = [e for e in events if e.type == "tool_call_finished"]
    ran = h.log.count("tool", name="send_email")
    if ran:  # the tool Step started before the steer committed: it ran to the end, once
        assert ran == 1
        assert '"status":"succeeded"' in finished.payload
    else:  # the tool Step saw the steer before starting: cancelled, never run
        assert '"status":"rejected"' in finished.payload
    assert _user_texts(done)[-1] == "actually, wait"


def test_a_steered_turn_without_unfinished_messages_stores_the_steered_note(
    factory_harness: HarnessFactory,
    tmp_path: Path,
) -> None:
    scripted = ScriptedRunner(
        [[_calls(("r1", "lookup"), ("w1", "send_email"))], [ModelReply(text="fine")]],
        [LOOKUP, SEND],
        RunLog(str(tmp_path / "unused.jsonl")),
    )
    h: Harness = factory_harness("control_flows:note_only_flow", scripted_config(scripted))
    session = h.start("look it up and email")
    h.wait_snapshot(
        session,
        lambda s: (
            any(i.interrupt_id == "w1" for i in s.pending_interrupts)
            and any(
                t.tool_call_id == "r1" and t.status is ToolCallStatus.SUCCEEDED
                for t in s.tool_calls
            )
        ),
        what="the read to finish beside the approval",
    )
    assert h.client.steer_user_message(session, text="stop emailing")
    done = h.wait_idle(session, 2)
    notes = [m.text or "" for m in done.messages if (m.text or "").startswith("[Dex]")]
    assert notes == [
        f"{STEERED_NOTE_HEADER}\n"
        "- lookup {} -> succeeded: 42\n"
        f"- send_email {{}} -> rejected: {SUPERSEDED_BY_STEER_RESULT}\n"
        "Do not repeat these tool calls unless the user asks again."
    ]
    assert h.log.count("tool", name="send_email") == 0


def test_steer_commits_during_a_call_that_continues_the_turn(
    factory_harness: HarnessFactory,
    tmp_path: Path,
) -> None:
    gate = tmp_path / "continue"
    h: Harness = factory_harness("control_flows:continuing_flow", {"gate": str(gate)})
    session = h.start("first")
    wait_until(lambda: h.log.count("model") == 1, what="the first model call")
    assert h.client.steer_user_message(session, text="second")
    gate.touch()
    done = h.wait_idle(session, 2)
    # RunModel saw the steer before its call: turn 1 ended without a second call.
    assert [e["turn"] for e in h.log.entries("model")] == ["turn-1", "turn-2"]
    assert done.messages[-1].text == "answer to second"
    assert [m.text for m in done.messages] == ["first", "second", "answer to second"]
    assert _collapsed(step_types(h.history(session))) == [
        "StartAgentSession",
        "RunModel",
        "RunModel",  # ended the steered turn without a model call
        "ApplyTurnControl",
        "RunModel",
    ]


def test_steer_by_id_moves_a_queued_message_and_keeps_order(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "model"
    h = harness(
        script=[[ModelReply(text="one", gate=str(gate))], [ModelReply(text="two")]],
    )
    session = h.start("first")
    wait_until(lambda: h.log.count("model") == 1, what="the model call")
    assert h.client.send_user_message(session, "queued a")
    assert h.client.send_user_message(session, "queued b")
    queued = h.snapshot(session).queued_messages
    assert _pending_texts(queued) == ["queued a", "queued b"]
    assert h.client.steer_user_message(session, message_id=queued[1].message_id)
    held = h.snapshot(session)
    # CI once saw "queued b" still queued and "queued a" steered: the SDK's hydrator
    # had swapped the two channels' values in the snapshot (test_snapshot_hydration).
    # On failure, say by ID what the snapshots showed and what the steer RPC itself
    # deleted and published (its history event): a wrong move or a wrong report.
    assert _pending_texts(held.queued_messages) == ["queued a"], _steer_diagnosis(
        h, session, queued, held
    )
    assert _pending_texts(held.steered_messages) == ["queued b"]
    # The moved message is no longer queued: steering or deleting it again is refused.
    assert not h.client.steer_user_message(session, message_id=queued[1].message_id)
    assert not h.client.delete_queued_message(session, queued[1].message_id)
    assert h.client.delete_queued_message(session, queued[0].message_id)
    gate.touch()
    done = h.wait_idle(session, 2)
    # Turn 1 answered before the steer applied; the steered message started turn 2.
    assert _user_texts(done) == ["first", "queued b"]
    assert done.queued_message_count == 0


def _steer_diagnosis(
    h: Harness, session: str, before: Sequence[PendingUserMessage], after: AgentSnapshot
) -> str:
    def listed(pending: Sequence[PendingUserMessage]) -> list[tuple[str, str | None]]:
        return [(p.message_id, p.message.text if p.message else None) for p in pending]

    history = h.history(session)
    steers = [
        (
            event.rpc_execution_completed.input.obj_value.payload.decode(),
            [d.message_id for d in event.rpc_execution_completed.delete_from_channel],
            [
                (m.channel_name, m.value.obj_value.payload.decode())
                for m in event.rpc_execution_completed.publish_to_channel
            ],
        )
        for event in history
        if event.HasField("rpc_execution_completed")
        and event.rpc_execution_completed.rpc_name == "steer_user_message"
    ]
    return (
        f"queued before {listed(before)}; queued after {listed(after.queued_messages)}; "
        f"steered after {listed(after.steered_messages)}; steer RPCs (input, deleted IDs, "
        f"published) {steers}; state {after.state}; Steps {step_types(history)}; "
        f"model calls {h.log.entries('model')}"
    )


def test_steer_and_delete_refuse_bad_requests(harness: HarnessFactory) -> None:
    h = harness(script=[[ModelReply(text="hi")]])
    session = h.start()
    h.wait_snapshot(session, lambda s: s.state is not None, what="the session to start")
    assert not h.client.steer_user_message(session)  # neither field
    assert not h.client.steer_user_message(session, text="x", message_id="m")  # both
    assert not h.client.steer_user_message(session, text="   ")  # blank
    assert not h.client.steer_user_message(session, message_id="no-such-message")
    assert not h.client.delete_queued_message(session, "no-such-message")
    assert not h.client.delete_queued_message(session, "")
    # While no turn runs, a steer is an ordinary queued message.
    assert h.client.steer_user_message(session, text="hello")
    done = h.wait_idle(session, 1)
    assert _user_texts(done) == ["hello"]
    assert done.state is not None
    assert done.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE


def test_steering_a_turn_twice_starts_one_turn_with_both_messages(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "tool"
    h = harness(
        script=[[_calls(("r1", "slow"))], [ModelReply(text="both seen")]],
        tools=[ScriptedTool(name="slow", output="s", gate=str(gate))],
    )
    session = h.start("start")
    wait_until(lambda: h.log.count("tool") == 1, what="the tool to start")
    assert h.client.steer_user_message(session, text="steer one")
    assert h.client.steer_user_message(session, text="steer two")
    gate.touch()  # a started tool runs to the end; the turn then ends steered
    done = h.wait_idle(session, 2)
    assert _user_texts(done) == ["start", "steer one", "steer two"]
    events = h.events(session, "turn_completed")
    (steered,) = [e for e in events if e.type == "turn_steered"]
    assert '"steered_message_count":2' in steered.payload
    records = [m for m in done.messages if m.role is MessageRole.TOOL]
    assert [m.tool_output for m in records] == ["s"]  # the started tool's real result
