"""Every RPC's false and error cases: nothing stored changes."""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import pytest
from dex import DexServiceError, ValueMappingError
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dex_agents import SessionAlreadyStartedError, SessionNotFoundError
from dex_agents_contracts import (
    AgentSnapshot,
    AgentUserMessage,
    ListAgentMessagesRequest,
    ResolveInterruptRequest,
    SendUserMessageRequest,
)
from dex_agents_testing import ModelReply
from helpers import Harness, HarnessFactory


@pytest.fixture
def idle(harness: HarnessFactory) -> tuple[Harness, str, AgentSnapshot]:
    """A session that completed one turn and waits for a user message."""
    h = harness(script=[[ModelReply(text=f"answer {n}")] for n in range(1, 40)])
    session = h.start("hello")
    return h, session, h.wait_idle(session, 1)


def _unchanged(h: Harness, session: str, before: AgentSnapshot) -> None:
    after = h.snapshot(session)
    assert after == before


def test_send_user_message_false_cases(idle: tuple[Harness, str, AgentSnapshot]) -> None:
    h, session, before = idle
    assert h.client.send_user_message(session, "") is False
    assert h.client.send_user_message(session, "  \n\t ") is False
    plan = SendUserMessageRequest(text="plan it", plan_mode=True)
    assert h.client.client.invoke_rpc(h.flow.send_user_message, session, plan) is False
    _unchanged(h, session, before)


def test_rpc_inputs_of_the_wrong_type_are_refused(idle: tuple[Harness, str, AgentSnapshot]) -> None:
    h, session, before = idle
    text: Any = "hello"
    wrong: Any = AgentUserMessage(text="x")
    number: Any = 5
    with pytest.raises(ValueMappingError):
        h.client.client.invoke_rpc(h.flow.send_user_message, session, text)
    with pytest.raises(ValueMappingError):
        h.client.client.invoke_rpc(h.flow.resolve_interrupt, session, wrong)
    with pytest.raises(ValueMappingError):
        h.client.client.invoke_rpc(h.flow.list_agent_messages, session, number)
    # Wire JSON of the wrong shape reaches the Worker, whose codec refuses it.
    with grpc.insecure_channel(h.server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        for rpc_name, payload in [
            ("send_user_message", b'{"text":5}'),
            ("send_user_message", b"not json"),
            ("resolve_interrupt", b'{"interrupt_id":"x","approved":"yes"}'),
            ("list_agent_messages", b'{"before_sequence":"3","limit":5}'),
        ]:
            request = pb.InvokeRPCRequest(
                flow_id=session,
                rpc_name=rpc_name,
                input=pb.Value(obj_value=pb.EncodedObject(encoding="json", payload=payload)),
                request_id=str(uuid.uuid4()),
                is_transactional=rpc_name == "send_user_message",
                lock_attribute_keys=["PendingInterrupts"]
                if rpc_name == "resolve_interrupt"
                else [],
            )
            with pytest.raises(grpc.RpcError):
                stub.InvokeRPC(request, timeout=30)
    _unchanged(h, session, before)


def test_oversized_user_message_is_refused_and_nothing_changes(
    idle: tuple[Harness, str, AgentSnapshot],
) -> None:
    h, session, before = idle
    # Larger than the server's value limit: the server refuses the request.
    with pytest.raises(DexServiceError, match="value too large"):
        h.client.send_user_message(session, "x" * (3 * 1024 * 1024))
    _unchanged(h, session, before)


def test_resolve_interrupt_false_cases(idle: tuple[Harness, str, AgentSnapshot]) -> None:
    h, session, before = idle
    assert h.client.resolve_interrupt(session, "nope", approved=True) is False
    assert h.client.resolve_interrupt(session, "", approved=False) is False
    assert h.client.resolve_interrupt(session, "a/b", approved=True) is False
    request = ResolveInterruptRequest(interrupt_id="nope", approved=False, rejection_message="x")
    assert h.client.client.invoke_rpc(h.flow.resolve_interrupt, session, request) is False
    _unchanged(h, session, before)


def test_starting_a_running_session_again_is_an_error(
    idle: tuple[Harness, str, AgentSnapshot],
) -> None:
    h, session, before = idle
    with pytest.raises(SessionAlreadyStartedError):
        h.client.start_session(session, "again")
    _unchanged(h, session, before)


def test_unknown_session_is_an_error(harness: HarnessFactory) -> None:
    h = harness(script=[])
    with pytest.raises(SessionNotFoundError):
        h.client.send_user_message("no-such-session", "hello")
    with pytest.raises(SessionNotFoundError):
        h.client.resolve_interrupt("no-such-session", "x", approved=True)
    with pytest.raises(SessionNotFoundError):
        h.client.get_snapshot("no-such-session")
    with pytest.raises(SessionNotFoundError):
        h.client.list_messages("no-such-session")


def test_list_agent_messages_pages_and_limits(idle: tuple[Harness, str, AgentSnapshot]) -> None:
    h, session, _ = idle
    for n in range(2, 5):
        assert h.client.send_user_message(session, f"question {n}")
    done = h.wait_idle(session, 4)
    assert done.state is not None
    assert done.state.next_message_sequence == 9
    newest = h.client.list_messages(session, limit=3)
    assert [m.sequence for m in newest.messages] == [6, 7, 8]
    assert newest.next_before_sequence == 6
    assert newest.deleted_before_sequence is None
    older = h.client.list_messages(session, before_sequence=6, limit=3)
    assert [m.sequence for m in older.messages] == [3, 4, 5]
    oldest = h.client.list_messages(session, before_sequence=3, limit=3)
    assert [m.sequence for m in oldest.messages] == [1, 2]
    assert oldest.next_before_sequence is None
    # Limits are clamped to 1..200.
    one = h.client.client.invoke_rpc(
        h.flow.list_agent_messages, session, ListAgentMessagesRequest(limit=0)
    )
    assert [m.sequence for m in one.messages] == [8]
    negative = h.client.list_messages(session, limit=-5)
    assert [m.sequence for m in negative.messages] == [8]
    everything = h.client.list_messages(session, limit=10_000)
    assert [m.sequence for m in everything.messages] == list(range(1, 9))
    assert everything.next_before_sequence is None
    none_before = h.client.list_messages(session, before_sequence=1)
    assert none_before.messages == []
    assert none_before.next_before_sequence is None
    assert [m.sequence for m in h.client.all_messages(session)] == list(range(1, 9))


def test_snapshot_and_pages_of_a_fresh_session(harness: HarnessFactory) -> None:
    h = harness(script=[])
    session = h.start()
    snapshot = h.wait_snapshot(session, lambda s: s.state is not None, what="the session start")
    assert snapshot.messages == []
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 0
    page = h.client.list_messages(session)
    assert page.messages == []
    assert page.next_before_sequence is None
