"""The session's memory of client request IDs, without a server: what it keeps, for how
long, how many, and what it refuses.

The rules run on a FakeContext with the session clock moved by the test, because
the window is minutes long; `test_session_client_requests.py` runs them on dexlite.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest
from dex import RPCResult
from dex_agents import ClientRequestIdReusedError
from dex_agents.session._rpcs.client_requests import (
    CLIENT_REQUEST_LIMIT,
    CLIENT_REQUEST_WINDOW,
    answer_once,
    request_digest,
)
from dex_agents.session._schema import SessionSchema
from dex_agents.session._time import set_clock
from dex_agents_contracts import CancelTurnRequest, SendUserMessageRequest
from helpers import FakeContext

SCHEMA = SessionSchema.create(1024)


@dataclass
class Clock:
    now: datetime = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Rpc:
    """An RPC rule that answers `answer` and counts how often it was asked."""

    answer: bool = True
    calls: list[str] = field(default_factory=list)

    def __call__(
        self, context: FakeContext, request: SendUserMessageRequest, rpc: str = "send_user_message"
    ) -> bool:
        def decide() -> RPCResult[bool]:
            self.calls.append(request.text)
            return RPCResult(self.answer)

        return answer_once(SCHEMA, context, rpc, request, decide).output  # type: ignore[arg-type]


@pytest.fixture
def clock() -> Iterator[Clock]:
    clock = Clock()
    set_clock(clock)
    yield clock
    set_clock(None)


def _send(text: str, request_id: str | None) -> SendUserMessageRequest:
    return SendUserMessageRequest(text=text, client_request_id=request_id)


def _kept(context: FakeContext) -> list[str]:
    return list(SCHEMA.client_requests.get_all_instance_keys(context))  # type: ignore[arg-type]


def test_a_true_answer_is_kept_and_a_repeat_is_not_decided_again(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    assert rpc(context, _send("hi", "r1")) is True
    rpc.answer = False  # what deciding again would say now
    assert rpc(context, _send("hi", "r1")) is True
    assert rpc.calls == ["hi"]
    record = SCHEMA.client_requests.get(context, "r1")  # type: ignore[arg-type]
    assert record is not None
    assert (record.rpc_name, record.result, record.recorded_at) == (
        "send_user_message",
        True,
        clock.now,
    )


def test_a_false_answer_is_not_kept(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc(answer=False)
    assert rpc(context, _send(" ", "r1")) is False
    assert _kept(context) == []
    rpc.answer = True
    assert rpc(context, _send(" ", "r1")) is True
    assert rpc.calls == [" ", " "]


def test_without_an_id_every_call_is_decided_and_nothing_is_kept(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    assert rpc(context, _send("hi", None)) is True
    assert rpc(context, _send("hi", None)) is True
    assert rpc.calls == ["hi", "hi"]
    assert _kept(context) == []


def test_an_answer_is_kept_for_the_window_only(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    rpc(context, _send("hi", "r1"))
    clock.now += CLIENT_REQUEST_WINDOW - timedelta(milliseconds=1)
    rpc(context, _send("hi", "r1"))
    assert rpc.calls == ["hi"]
    clock.now += timedelta(milliseconds=1)
    rpc(context, _send("hi", "r1"))
    assert rpc.calls == ["hi", "hi"]


def test_the_next_kept_answer_deletes_expired_ones(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    rpc(context, _send("a", "old"))
    clock.now += CLIENT_REQUEST_WINDOW
    rpc(context, _send("b", "new"))
    assert _kept(context) == ["new"]


def test_at_most_the_limit_is_kept_the_oldest_going_first(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    for n in range(CLIENT_REQUEST_LIMIT + 2):
        rpc(context, _send(str(n), f"r{n:04d}"))
        clock.now += timedelta(milliseconds=1)
    kept = _kept(context)
    assert len(kept) == CLIENT_REQUEST_LIMIT
    assert kept[0] == "r0002"
    assert kept[-1] == f"r{CLIENT_REQUEST_LIMIT + 1:04d}"


def test_the_newest_answer_is_kept_even_among_equal_times(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    for n in range(CLIENT_REQUEST_LIMIT + 1):
        rpc(context, _send(str(n), f"z{CLIENT_REQUEST_LIMIT - n:04d}"))
    assert "z0000" in _kept(context)  # the last one, sorting first by key
    assert len(_kept(context)) == CLIENT_REQUEST_LIMIT


def test_an_id_that_answered_another_request_is_refused(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    rpc(context, _send("hi", "r1"))
    with pytest.raises(ClientRequestIdReusedError) as info:
        rpc(context, _send("bye", "r1"))
    assert info.value.client_request_id == "r1"
    assert info.value.session_id == "fake-session"
    assert str(info.value) == (
        "client request ID 'r1' already answered a different request "
        "(`send_user_message`); use a new ID for a new request"
    )
    with pytest.raises(ClientRequestIdReusedError):
        rpc(context, _send("hi", "r1"), rpc="steer_user_message")
    assert rpc.calls == ["hi"]


def test_a_malformed_id_is_refused_naming_it(clock: Clock) -> None:
    context, rpc = FakeContext(), Rpc()
    with pytest.raises(ValueError, match=r"`client_request_id` 'a/b' may hold only"):
        rpc(context, _send("hi", "a/b"))
    with pytest.raises(ValueError, match="1 to 128 characters long, got 129"):
        rpc(context, _send("hi", "x" * 129))
    assert rpc.calls == []


def test_the_digest_leaves_the_id_out() -> None:
    assert request_digest(_send("hi", "r1")) == request_digest(_send("hi", "r2"))
    assert request_digest(_send("hi", "r1")) != request_digest(_send("ho", "r1"))
    named = CancelTurnRequest(turn_id=None, client_request_id="c")
    assert request_digest(named) == request_digest(CancelTurnRequest(turn_id=None))
