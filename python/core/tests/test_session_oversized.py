"""A user message too large to store fails its turn, and the session goes on.

Design "Message storage": "A message too large for values.maxValueBytes fails
that first commit, and the turn fails". dexlite caps one stored Value at
`--max-value-bytes` (2 MiB by default) and a request at 3.5 MB. The message
below passes every request (the RPC input, the QueuedUserMessages publish and
the Step's Execute request stay under the limits), but once wrapped as a stored
AgentMessage, whose framework_item repeats the text, it needs about 3 MiB.
"""

from __future__ import annotations

import grpc
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dex_agents.options import MAX_VALUE_BYTES
from dex_agents_contracts import AgentSnapshot, AgentStatus, MessageRole
from dex_agents_testing import ModelReply, executed_steps
from helpers import Harness, HarnessFactory

# Under the 2 MiB value limit as a request, about 3 MiB as a stored message.
OVERSIZED = "x" * (MAX_VALUE_BYTES * 3 // 4)


def _assert_failed_for_size(snapshot: AgentSnapshot, *, turns: int) -> None:
    state = snapshot.state
    assert state is not None
    assert state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    assert state.turn_count == turns
    assert state.active_turn_id is None
    assert state.last_turn_error is not None
    assert "values.maxValueBytes" in state.last_turn_error
    assert OVERSIZED[:100] not in state.last_turn_error  # the error names sizes, not text
    assert snapshot.tool_calls == []
    assert snapshot.pending_interrupts == []


def _history(h: Harness, session: str) -> list[pb.FlowHistoryEvent]:
    """The run's history; its events carry the big message, past gRPC's 4 MiB default."""
    events: list[pb.FlowHistoryEvent] = []
    token = b""
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    with grpc.insecure_channel(h.server.address, options=options) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        while True:
            request = pb.GetHistoryEventsRequest(
                flow_id=session, run_id=h.runs[session], estimate_page_size=10
            )
            if token:
                request.next_page_token = token
            response = stub.GetHistoryEvents(request, timeout=30)
            events.extend(response.events)
            token = response.next_page_token
            if not token:
                return events


def _assert_no_retries(h: Harness, session: str) -> None:
    steps = executed_steps(_history(h, session))
    assert steps, "no Step ran"
    assert all(s.attempt == 1 and not s.failed for s in steps), [
        (s.step_type, s.attempt, s.failed) for s in steps
    ]


def test_oversized_user_message_fails_its_turn_and_the_next_message_runs(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[
            [ModelReply(text="first answer")],
            [ModelReply(text="never used: turn 2 makes no model call")],
            [ModelReply(text="third answer")],
        ]
    )
    session = h.start("hello")
    h.wait_idle(session, 1)

    assert h.client.send_user_message(session, OVERSIZED) is True
    failed = h.wait_idle(session, 2)
    _assert_failed_for_size(failed, turns=2)
    # Nothing of the message was stored: no message, no sequence, no chunk.
    assert [m.text for m in failed.messages] == ["hello", "first answer"]
    assert failed.state is not None
    assert failed.state.next_message_sequence == 3
    assert failed.queued_message_count == 0
    events = h.events(session, "turn_failed")
    assert [e.type for e in events if e.turn_id == "turn-2"] == ["turn_failed"]

    # The session keeps working: the next message gets a normal turn.
    assert h.client.send_user_message(session, "and now?") is True
    after = h.wait_idle(session, 3)
    assert after.state is not None
    assert after.state.last_turn_error is None
    assert [(m.sequence, m.role, m.text) for m in after.messages] == [
        (1, MessageRole.USER, "hello"),
        (2, MessageRole.ASSISTANT, "first answer"),
        (3, MessageRole.USER, "and now?"),
        (4, MessageRole.ASSISTANT, "third answer"),
    ]
    assert [m.sequence for m in h.client.all_messages(session)] == [1, 2, 3, 4]
    assert [e["turn"] for e in h.log.entries("model")] == ["turn-1", "turn-3"]
    (third,) = h.log.entries("model", turn="turn-3")
    assert third["seen"] == ["hello", "first answer", "and now?"]
    # The failure took no retry: every Step, AwaitUserMessage included, ran once.
    _assert_no_retries(h, session)


def test_oversized_initial_message_fails_the_first_turn_and_the_session_goes_on(
    harness: HarnessFactory,
) -> None:
    h = harness(
        script=[
            [ModelReply(text="never used")],
            [ModelReply(text="second answer")],
        ]
    )
    session = h.start(OVERSIZED)
    failed = h.wait_idle(session, 1)
    _assert_failed_for_size(failed, turns=1)
    assert failed.messages == []
    assert failed.state is not None
    assert failed.state.next_message_sequence == 1

    assert h.client.send_user_message(session, "hi") is True
    after = h.wait_idle(session, 2)
    assert after.state is not None
    assert after.state.last_turn_error is None
    assert [(m.sequence, m.text) for m in after.messages] == [(1, "hi"), (2, "second answer")]
    assert [e["turn"] for e in h.log.entries("model")] == ["turn-2"]
    _assert_no_retries(h, session)
