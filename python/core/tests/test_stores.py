"""The session stores against a dict Context: TurnReplySequence and PendingInterrupts rewrites."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

from dex_agents.options import AgentSessionOptions
from dex_agents.runner import FrameworkMessage
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._stores.interrupts import InterruptStore
from dex_agents_contracts import (
    AgentInterrupt,
    AgentState,
    AgentStatus,
    InteractionMode,
    InterruptKind,
    MessageRole,
    TurnCompletedPayload,
    TurnReplySequence,
)
from helpers import FakeContext
from stepwise_flows import flow


class _Events:
    """Collects what end_turn writes."""

    def __init__(self) -> None:
        self.written: list[object] = []

    def write(self, payload: object) -> None:
        self.written.append(payload)


def _runtime(**options: Any) -> SessionRuntime:
    session_flow = flow({"flow_type": "Stores", "log_path": "/dev/null"})
    runtime = session_flow._runtime
    return dataclasses.replace(runtime, options=AgentSessionOptions(**options))


def _running(turn_id: str, *, next_message_sequence: int) -> AgentState:
    return AgentState(
        status=AgentStatus.RUNNING_MODEL,
        next_message_sequence=next_message_sequence,
        interaction_mode=InteractionMode.CHAT,
        active_turn_id=turn_id,
        turn_count=int(turn_id.rsplit("-", 1)[1]) - 1,
    )


def _message(role: MessageRole, text: str) -> FrameworkMessage:
    return FrameworkMessage(role=role, text=text, framework_item="{}")


def test_a_turn_another_worker_started_records_its_reply_sequence_at_its_next_store() -> None:
    # An older Worker started turn-2 and left TurnReplySequence naming turn-1.
    runtime = _runtime(message_window_size=2, message_chunk_size=2)
    context: Any = FakeContext()
    state = _running("turn-2", next_message_sequence=1)
    store = runtime.store
    store.append(
        context,
        state,
        "turn-1",
        [_message(MessageRole.USER, "q1"), _message(MessageRole.ASSISTANT, "a1")],
    )
    runtime.schema.turn_reply_sequence.set(context, TurnReplySequence(turn_id="turn-1", sequence=2))
    store.append(
        context,
        state,
        "turn-2",
        [_message(MessageRole.USER, "q2"), _message(MessageRole.ASSISTANT, "r1")],
    )
    assert state.next_message_sequence == 5

    # This Worker's first store in turn-2: the value is recorded before the
    # rollover moves the turn's messages out of the window.
    runtime.append_messages(context, state, "turn-2", [_message(MessageRole.ASSISTANT, "r2")])
    assert runtime.schema.turn_reply_sequence.get(context) == TurnReplySequence(
        turn_id="turn-2", sequence=4
    )
    assert sorted(context.keys("AgentMessages")) == [5]  # r1 left the window

    events = _Events()
    runtime.end_turn(context, state, "turn-2", events, error=None)  # type: ignore[arg-type]
    assert events.written == [TurnCompletedPayload(message_count=2)]


def test_a_store_in_a_turn_that_names_its_reply_sequence_writes_none() -> None:
    runtime = _runtime()
    context: Any = FakeContext()
    state = _running("turn-1", next_message_sequence=3)
    reply = TurnReplySequence(turn_id="turn-1", sequence=2)
    runtime.schema.turn_reply_sequence.set(context, reply)
    runtime.append_messages(context, state, "turn-1", [])
    runtime.append_messages(context, state, "turn-1", [_message(MessageRole.ASSISTANT, "a")])
    assert runtime.schema.turn_reply_sequence.get(context) == reply


def _interrupt(interrupt_id: str, tool_call_id: str) -> AgentInterrupt:
    return AgentInterrupt(
        interrupt_id=interrupt_id,
        kind=InterruptKind.QUESTION,
        tool_call_id=tool_call_id,
        tool_name="tool",
        arguments="{}",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def test_interrupt_store_rewrites() -> None:
    store = InterruptStore(_runtime().schema)
    context: Any = FakeContext()
    assert store.pending(context) == []
    store.add(context, [_interrupt("a", "call-1"), _interrupt("a-input-1", "call-2")])
    store.add(context, [_interrupt("b", "call-2")])
    assert [i.interrupt_id for i in store.pending(context)] == ["a", "a-input-1", "b"]
    assert store.find(context, "b") == _interrupt("b", "call-2")
    assert store.find(context, "c") is None
    store.remove(context, "a")
    assert [i.interrupt_id for i in store.pending(context)] == ["a-input-1", "b"]
    assert store.remove_for_call(context, "call-9") == []
    removed = store.remove_for_call(context, "call-2")
    assert [i.interrupt_id for i in removed] == ["a-input-1", "b"]
    assert store.pending(context) == []
    store.add(context, [_interrupt("d", "call-3")])
    store.clear(context)
    assert context.values[("PendingInterrupts", None)] == []
