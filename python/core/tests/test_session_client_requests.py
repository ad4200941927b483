"""Client request IDs end to end: a reply lost after the commit, retried, applies once.

dexlite, a Worker process and the scripted model are real; the client reaches
dexlite through `CutProxy`, which resets the connection in place of the first
reply after it is armed. dexlite sends a reply only after it committed the call,
so the session has applied the request when the client sees its connection drop;
the client's retry carries the same client request ID and a new Dex request ID.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from cut_proxy import CutProxy
from dex import WorkerInvocationError
from dex_agents import AgentSessionClient, ClientRequestIdReusedError, UserError
from dex_agents_contracts import AgentSnapshot, MessageRole, SendUserMessageRequest, ToolEffect
from dex_agents_testing import ModelReply, ScriptedTool, ScriptedToolCall, assert_step_shape
from helpers import Harness, HarnessFactory

SEND = ScriptedTool(name="send_email", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


@pytest.fixture
def chat(harness: HarnessFactory) -> tuple[Harness, str]:
    """A session that answered its first message and waits for the next."""
    h = harness(script=[[ModelReply(text=f"answer {n}")] for n in range(1, 6)])
    session = h.start("hello")
    h.wait_idle(session, 1)
    return h, session


@pytest.fixture
def proxied(chat: tuple[Harness, str]) -> Iterator[tuple[AgentSessionClient, CutProxy]]:
    """A second client of the same Flow whose connection to dexlite the test can cut."""
    h, _ = chat
    with CutProxy(h.server.address) as proxy:
        client = AgentSessionClient(h.flow, server_address=proxy.address)
        yield client, proxy
        client.close()


def _user_texts(snapshot: AgentSnapshot) -> list[str | None]:
    return [m.text for m in snapshot.messages if m.role is MessageRole.USER]


def test_a_send_whose_reply_is_lost_after_the_commit_runs_one_turn(
    chat: tuple[Harness, str], proxied: tuple[AgentSessionClient, CutProxy]
) -> None:
    h, session = chat
    client, proxy = proxied
    assert client.get_snapshot(session).state is not None  # the proxied channel is up
    proxy.arm()
    assert client.send_user_message(session, "hello again") is True
    assert proxy.cut.is_set(), "no reply was dropped"
    assert proxy.connections == 2, "the retry did not open a new connection"
    done = h.wait_idle(session, 2)
    assert done.state is not None
    assert done.state.turn_count == 2
    assert done.queued_message_count == 0
    assert _user_texts(done) == ["hello", "hello again"]
    assert [m.text for m in done.messages if m.role is MessageRole.ASSISTANT] == [
        "answer 1",
        "answer 2",
    ]
    shapes = h.shapes(session)
    assert len(shapes) == 2, shapes
    assert_step_shape(h.history(session), ["RunModel"], turn=1)
    # Only the first attempt applied anything: one RPC with effects in the history.
    rpcs = [
        e.rpc_execution_completed.rpc_name
        for e in h.history(session)
        if e.WhichOneof("payload") == "rpc_execution_completed"
    ]
    assert rpcs.count("send_user_message") == 1


def test_an_approval_whose_reply_is_lost_answers_true_and_runs_the_tool_once(
    harness: HarnessFactory,
) -> None:
    """Without the ID the retry would find the interrupt gone and answer false."""
    call = ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="w1", tool_name="send_email")])
    h = harness(script=[[call, ModelReply(text="done")]], tools=[SEND])
    session = h.start("email them")
    assert h.client.wait_for_interrupt(session, "w1") is not None
    with CutProxy(h.server.address) as proxy:
        client = AgentSessionClient(h.flow, server_address=proxy.address)
        try:
            assert client.get_snapshot(session).pending_interrupts
            proxy.arm()
            assert client.resolve_interrupt(session, "w1", approved=True) is True
            assert proxy.cut.is_set()
        finally:
            client.close()
    h.wait_idle(session, 1)
    assert h.log.count("tool", name="send_email") == 1


def test_a_repeated_client_request_id_returns_the_first_answer(
    chat: tuple[Harness, str],
) -> None:
    h, session = chat
    request_id = f"send-{uuid.uuid4()}"
    assert h.client.send_user_message(session, "once", client_request_id=request_id)
    assert h.client.send_user_message(session, "once", client_request_id=request_id)
    done = h.wait_idle(session, 2)
    assert _user_texts(done) == ["hello", "once"]
    # A false answer changed nothing and is not kept: the same ID is decided afresh.
    blank = f"blank-{uuid.uuid4()}"
    assert h.client.send_user_message(session, " ", client_request_id=blank) is False
    assert h.client.send_user_message(session, " ", client_request_id=blank) is False


def test_a_client_request_id_reused_for_another_request_is_refused(
    chat: tuple[Harness, str],
) -> None:
    h, session = chat
    request_id = f"reuse-{uuid.uuid4()}"
    assert h.client.send_user_message(session, "first", client_request_id=request_id)
    with pytest.raises(ClientRequestIdReusedError) as info:
        h.client.send_user_message(session, "second", client_request_id=request_id)
    assert info.value.client_request_id == request_id
    assert info.value.session_id == session
    assert f"client request ID {request_id!r} already answered a different request" in str(
        info.value
    )
    with pytest.raises(ClientRequestIdReusedError, match="send_user_message"):
        h.client.cancel_turn(session, "turn-9", client_request_id=request_id)
    done = h.wait_idle(session, 2)
    assert _user_texts(done) == ["hello", "first"]


def test_a_malformed_client_request_id_is_refused(chat: tuple[Harness, str]) -> None:
    h, session = chat
    with pytest.raises(UserError, match="may hold only"):
        h.client.send_user_message(session, "x", client_request_id="a/b")
    with pytest.raises(UserError, match="1 to 128 characters"):
        h.client.cancel_turn(session, client_request_id="")
    # A caller that skips the client's check meets the session's.
    request = SendUserMessageRequest(text="x", client_request_id="a b")
    with pytest.raises(WorkerInvocationError) as info:
        h.client.client.invoke_rpc(h.flow.send_user_message, session, request)
    assert "may hold only" in info.value.worker_error_detail
    assert h.snapshot(session).queued_message_count == 0
