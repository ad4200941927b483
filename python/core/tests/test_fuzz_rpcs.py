"""Property-based fuzzing of every session RPC, against a real dexlite and Worker.

One idle session (one turn done, nothing queued, no interrupt, no plan) takes
generated bad input on every public client method: wrong types, oversized and
unicode text, ids that are unknown, empty or hold `/`, integers out of range,
settings that are not JSON objects. Each call must return false or raise the
documented error, and what dexlite stores must stay byte-identical: an SQLite
dump of the private dexlite's database before and after each case.

`DEX_AGENTS_FUZZ=long` runs 10,000 cases per test (see python/core/README.md).
"""

from __future__ import annotations

import functools
import os
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from dex import DexServiceError, ValueMappingError
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dex_agents import SessionAlreadyStartedError, SessionNotFoundError, UserError
from dex_agents_contracts import (
    AgentSnapshot,
    AgentStatus,
    ToolEffect,
    WireFormatError,
    encode_agent_user_message,
)
from dex_agents_contracts import AgentUserMessage as UserMessage
from dex_agents_testing import ModelReply, ScriptedTool, ScriptedToolCall, wait_until
from dexlite.testing import database_dump
from helpers import Harness, HarnessFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LONG = os.environ.get("DEX_AGENTS_FUZZ") == "long"
settings.register_profile(
    "dex-fuzz-rpcs-ci",
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "dex-fuzz-rpcs-long",
    max_examples=10_000,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
FUZZ = settings.get_profile("dex-fuzz-rpcs-long" if LONG else "dex-fuzz-rpcs-ci")

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**53 - 1), 2**53 - 1)
SERVER_VALUE_LIMIT = 2 * 1024 * 1024  # dexlite's default --max-value-bytes
MAX_SETTINGS = 16_384 + 1_024

# --- inputs ------------------------------------------------------------------------

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=24)
_EDGE_IDS = ["", " ", "/", "a/b", "/x/", "..", "\x00", "\u2028", "\U0001f600", "i" * 5000]
IDS = st.one_of(st.sampled_from(_EDGE_IDS), _TEXT, st.uuids().map(str))
BLANK = st.text(st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u1680\u2000\u2028\u2029\u3000"), max_size=8)
LONE_SURROGATE = st.tuples(_TEXT, st.integers(0xD800, 0xDFFF)).map(lambda p: p[0] + chr(p[1]))
WRONG_TYPES: st.SearchStrategy[object] = st.sampled_from(
    [5, 2.5, True, b"bytes", ["list"], {"a": 1}, object()]
)
NOT_INT = WRONG_TYPES.filter(lambda v: type(v) is not int)
HUGE_INT32S = st.one_of(st.integers(max_value=INT32[0] - 1), st.integers(min_value=INT32[1] + 1))
HUGE_INTS = st.one_of(st.integers(max_value=INT64[0] - 1), st.integers(min_value=INT64[1] + 1))
OVERSIZED_TEXT = st.sampled_from(["x" * (SERVER_VALUE_LIMIT + 1024), "\U0001f600" * 800_000])
# What python/core/README.md ("Client request IDs") allows; anything else is refused.
_CLIENT_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
BAD_CLIENT_REQUEST_IDS = st.one_of(
    IDS.filter(lambda v: _CLIENT_REQUEST_ID.fullmatch(v) is None),
    WRONG_TYPES.filter(lambda v: not isinstance(v, str)),
)


def _json_values() -> st.SearchStrategy[object]:
    return st.recursive(
        st.none() | st.booleans() | st.integers(*INT64) | _TEXT,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
        max_leaves=6,
    )


SETTINGS = st.dictionaries(_TEXT, _json_values(), max_size=3)
OVERSIZED_SETTINGS = st.integers(MAX_SETTINGS + 1, MAX_SETTINGS + 4000).map(
    lambda n: {"big": "s" * n}
)


# --- the session and its stored state ------------------------------------------------


@dataclass
class Idle:
    harness: Harness
    session: str
    snapshot: AgentSnapshot
    db: str

    def dump(self) -> str:
        return database_dump(self.db)


@pytest.fixture
def idle(private_harness: HarnessFactory) -> Idle:
    """A session on a dexlite of its own that completed one turn and waits."""
    h = private_harness(script=[[ModelReply(text=f"answer {n}")] for n in range(1, 6)])
    session = h.start("hello")
    snapshot = h.wait_idle(session, 1)
    # AgentState says idle once the turn's last Step commits; the history event of
    # the next AwaitUserMessage's WaitFor comes after it. Only then is nothing left
    # to write until a user message arrives.
    _settle(h, session)
    return Idle(h, session, snapshot, h.server.db_path)


def _unchanged(idle: Idle, case: Callable[[], object]) -> object:
    """Run one case; nothing dexlite stores may change, nor what the snapshot reads."""
    before = idle.dump()
    outcome: object
    try:
        outcome = case()
    except Exception as error:
        outcome = error
    assert idle.dump() == before, f"stored state changed (outcome {outcome!r:.300})"
    return outcome


def _is_false(outcome: object) -> None:
    assert outcome is False, f"expected False, got {outcome!r:.300}"


def _raised(outcome: object, *types: type[BaseException]) -> None:
    assert isinstance(outcome, types), f"expected {types}, got {outcome!r:.300}"
    assert str(outcome), f"{type(outcome).__name__} without a message"


# --- false cases -----------------------------------------------------------------------

_FALSE_CASES = st.one_of(
    st.tuples(st.just("send_user_message"), BLANK, st.booleans()),
    # A false answer is not kept, so even a named request stores nothing.
    st.tuples(st.just("send_user_message_named"), BLANK, st.uuids().map(str)),
    st.tuples(st.just("send_user_message_plan"), _TEXT.filter(lambda t: t.strip() != "")),
    st.tuples(st.just("resolve_interrupt"), IDS, st.booleans(), st.none() | _TEXT),
    st.tuples(st.just("answer_question"), IDS, _TEXT),
    st.tuples(st.just("steer_both"), _TEXT, IDS),
    st.tuples(st.just("steer_neither")),
    st.tuples(st.just("steer_blank"), BLANK),
    st.tuples(st.just("steer_unknown_id"), IDS),
    st.tuples(st.just("delete_queued_message"), IDS),
    st.tuples(st.just("cancel_turn"), st.none() | IDS),
    st.tuples(st.just("execute_plan"), st.integers(*INT32)),
    st.tuples(st.just("update_none")),
    st.tuples(
        st.just("update_not_mapping"),
        st.one_of(WRONG_TYPES.filter(lambda v: not isinstance(v, dict)), _TEXT, st.lists(_TEXT)),
    ),
    st.tuples(st.just("update_oversized"), OVERSIZED_SETTINGS),
)


def _false_call(idle: Idle, case: tuple[Any, ...]) -> Callable[[], object]:
    c = idle.harness.client
    s = idle.session
    kind, *args = case
    calls: dict[str, Callable[[], object]] = {
        "send_user_message": lambda: c.send_user_message(s, args[0], plan_mode=args[-1]),
        "send_user_message_plan": lambda: c.send_user_message(s, args[0], plan_mode=True),
        "send_user_message_named": lambda: c.send_user_message(
            s, args[0], client_request_id=args[-1]
        ),
        "resolve_interrupt": lambda: c.resolve_interrupt(
            s, args[0], approved=args[1], rejection_message=args[-1]
        ),
        "answer_question": lambda: c.answer_question(s, args[0], args[-1]),
        "steer_both": lambda: c.steer_user_message(s, text=args[0], message_id=args[-1]),
        "steer_neither": lambda: c.steer_user_message(s),
        "steer_blank": lambda: c.steer_user_message(s, text=args[0]),
        "steer_unknown_id": lambda: c.steer_user_message(s, message_id=args[0]),
        "delete_queued_message": lambda: c.delete_queued_message(s, args[0]),
        "cancel_turn": lambda: c.cancel_turn(s, args[0]),
        "execute_plan": lambda: c.execute_plan(s, args[0]),
        "update_none": lambda: c.update_session_settings(s, None),
        "update_not_mapping": lambda: c.update_session_settings(s, args[0]),
        "update_oversized": lambda: c.update_session_settings(s, args[0]),
    }
    return calls[kind]


def test_rpcs_that_must_return_false_change_nothing(idle: Idle) -> None:
    @FUZZ
    @given(_FALSE_CASES)
    def check(case: tuple[Any, ...]) -> None:
        _is_false(_unchanged(idle, _false_call(idle, case)))

    check()
    assert idle.harness.snapshot(idle.session) == idle.snapshot


# --- error cases -----------------------------------------------------------------------

_CODEC_ERRORS = (WireFormatError, ValueMappingError)

_ERROR_CASES = st.one_of(
    st.tuples(st.just("bad_client_request_id"), BAD_CLIENT_REQUEST_IDS),
    st.tuples(st.just("send_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("send_surrogate"), LONE_SURROGATE),
    st.tuples(st.just("send_oversized"), OVERSIZED_TEXT),
    st.tuples(st.just("resolve_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("answer_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("answer_surrogate"), LONE_SURROGATE),
    st.tuples(st.just("steer_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("delete_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("cancel_wrong_type"), WRONG_TYPES),
    st.tuples(st.just("execute_plan_huge"), HUGE_INT32S),
    st.tuples(st.just("execute_plan_wrong_type"), NOT_INT),
    st.tuples(st.just("list_huge"), HUGE_INTS, st.integers(*INT64)),
    st.tuples(st.just("list_wrong_type"), NOT_INT),
    st.tuples(st.just("unknown_session"), st.uuids().map(lambda u: f"no-such-{u}")),
    st.tuples(
        st.just("start_again"),
        st.none() | _TEXT,
        st.none() | st.dictionaries(_TEXT, _json_values(), max_size=3),
    ),
    st.tuples(st.just("start_oversized"), IDS, OVERSIZED_SETTINGS),
)


def _expect_error(idle: Idle, case: tuple[Any, ...]) -> None:
    c = idle.harness.client
    s = idle.session
    kind, *args = case
    bad: Any = args[0]
    if kind == "bad_client_request_id":
        for mutation in (
            lambda: c.send_user_message(s, "hello", client_request_id=bad),
            lambda: c.resolve_interrupt(s, "i", approved=True, client_request_id=bad),
            lambda: c.cancel_turn(s, client_request_id=bad),
            lambda: c.update_session_settings(s, {"a": 1}, client_request_id=bad),
        ):
            _raised(_unchanged(idle, mutation), UserError)
    elif kind in {"send_wrong_type", "send_surrogate"}:
        _raised(_unchanged(idle, lambda: c.send_user_message(s, bad)), *_CODEC_ERRORS)
    elif kind == "send_oversized":
        outcome = _unchanged(idle, lambda: c.send_user_message(s, bad))
        _raised(outcome, DexServiceError)
        assert "value too large" in str(outcome)
    elif kind == "resolve_wrong_type":
        _raised(
            _unchanged(idle, lambda: c.resolve_interrupt(s, bad, approved=True)), *_CODEC_ERRORS
        )
    elif kind == "answer_wrong_type":
        _raised(_unchanged(idle, lambda: c.answer_question(s, "i", bad)), *_CODEC_ERRORS)
    elif kind == "answer_surrogate":
        _raised(_unchanged(idle, lambda: c.answer_question(s, bad, "x")), *_CODEC_ERRORS)
    elif kind == "steer_wrong_type":
        _raised(_unchanged(idle, lambda: c.steer_user_message(s, text=bad)), *_CODEC_ERRORS)
    elif kind == "delete_wrong_type":
        _raised(_unchanged(idle, lambda: c.delete_queued_message(s, bad)), *_CODEC_ERRORS)
    elif kind == "cancel_wrong_type":
        _raised(_unchanged(idle, lambda: c.cancel_turn(s, bad)), *_CODEC_ERRORS)
    elif kind in {"execute_plan_huge", "execute_plan_wrong_type"}:
        _raised(_unchanged(idle, lambda: c.execute_plan(s, bad)), *_CODEC_ERRORS)
    elif kind == "list_huge":
        outcome = _unchanged(idle, lambda: c.list_messages(s, before_sequence=bad, limit=args[1]))
        _raised(outcome, *_CODEC_ERRORS)
    elif kind == "list_wrong_type":
        _raised(_unchanged(idle, lambda: c.list_messages(s, limit=bad)), *_CODEC_ERRORS)
    elif kind == "unknown_session":
        for call in (
            lambda: c.send_user_message(bad, "hello"),
            lambda: c.get_snapshot(bad),
            lambda: c.list_messages(bad),
            lambda: c.update_session_settings(bad, {"a": 1}),
            lambda: c.cancel_turn(bad),
        ):
            _raised(_unchanged(idle, call), SessionNotFoundError)
    elif kind == "start_again":
        outcome = _unchanged(idle, lambda: c.start_session(s, bad, session_settings=args[1]))
        _raised(outcome, SessionAlreadyStartedError)
    else:
        assert kind == "start_oversized"
        outcome = _unchanged(idle, lambda: c.start_session(bad, "hi", session_settings=args[1]))
        _raised(outcome, UserError)


def test_rpcs_refuse_bad_input_with_the_documented_error(idle: Idle) -> None:
    @FUZZ
    @given(_ERROR_CASES)
    def check(case: tuple[Any, ...]) -> None:
        _expect_error(idle, case)

    check()
    assert idle.harness.snapshot(idle.session) == idle.snapshot


# --- a session waiting for an approval ------------------------------------------------

SEND = ScriptedTool(name="send_email", effect=ToolEffect.NON_IDEMPOTENT_WRITE, output="sent")


def _settle(h: Harness, session: str) -> None:
    """Until the history ends with a waiting Step's WaitFor: nothing more is written."""
    wait_until(
        lambda: h.history(session)[-1].HasField("step_wait_for_completed"),
        what="the session's next Step to wait",
    )


@pytest.fixture
def waiting(private_harness: HarnessFactory) -> Idle:
    """A session whose turn waits for the approval of tool call `w1`."""
    h = private_harness(
        script=[
            [ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="w1", tool_name="send_email")])]
        ],
        tools=[SEND],
    )
    session = h.start("email them")
    h.wait_snapshot(session, lambda s: bool(s.pending_interrupts), what="approval")
    _settle(h, session)
    return Idle(h, session, h.snapshot(session), h.server.db_path)


_WAITING_FALSE_CASES = st.one_of(
    st.tuples(st.just("resolve_other"), IDS.filter(lambda i: i != "w1"), st.booleans()),
    st.tuples(st.just("answer_question"), st.one_of(st.just("w1"), IDS), _TEXT),
    st.tuples(st.just("cancel_other"), IDS),
    st.tuples(st.just("delete_queued_message"), IDS),
    st.tuples(st.just("send_blank"), BLANK),
    st.tuples(st.just("execute_plan"), st.integers(*INT32)),
    st.tuples(st.just("steer_both"), _TEXT, IDS),
    st.tuples(st.just("steer_unknown_id"), IDS),
)


def test_rpcs_beside_a_pending_approval_return_false_and_change_nothing(waiting: Idle) -> None:
    c = waiting.harness.client
    s = waiting.session
    assert waiting.snapshot.state is not None
    turn = waiting.snapshot.state.active_turn_id

    @FUZZ
    @given(_WAITING_FALSE_CASES)
    def check(case: tuple[Any, ...]) -> None:
        kind, *args = case
        calls: dict[str, Callable[[], object]] = {
            "resolve_other": lambda: c.resolve_interrupt(s, args[0], approved=args[-1]),
            "answer_question": lambda: c.answer_question(s, args[0], args[-1]),
            "cancel_other": lambda: c.cancel_turn(s, args[0] if args[0] != turn else "x"),
            "delete_queued_message": lambda: c.delete_queued_message(s, args[0]),
            "send_blank": lambda: c.send_user_message(s, args[0]),
            "execute_plan": lambda: c.execute_plan(s, args[0]),
            "steer_both": lambda: c.steer_user_message(s, text=args[0], message_id=args[-1]),
            "steer_unknown_id": lambda: c.steer_user_message(s, message_id=args[0]),
        }
        _is_false(_unchanged(waiting, calls[kind]))

    check()
    assert waiting.harness.snapshot(s) == waiting.snapshot


# --- reads -----------------------------------------------------------------------------


def test_reads_change_nothing_and_clamp(idle: Idle) -> None:
    c = idle.harness.client
    stored = [m.sequence for m in idle.snapshot.messages]

    @FUZZ
    @given(st.none() | st.integers(*INT64), st.integers(*INT32))
    def check(before: int | None, limit: int) -> None:
        page: Any = _unchanged(
            idle, lambda: c.list_messages(idle.session, before_sequence=before, limit=limit)
        )
        assert not isinstance(page, BaseException), page
        got = [m.sequence for m in page.messages]
        expected = [q for q in stored if before is None or q < before]
        assert got == expected[-max(1, min(limit, 200)) :]
        snapshot = _unchanged(idle, lambda: c.get_snapshot(idle.session))
        assert snapshot == idle.snapshot

    check()


# --- duplicate request ids over the wire ------------------------------------------------


def _invoke(idle: Idle, rpc: str, payload: bytes, request_id: str) -> bytes:
    with grpc.insecure_channel(idle.harness.server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        request = pb.InvokeRPCRequest(
            flow_id=idle.session,
            rpc_name=rpc,
            input=pb.Value(obj_value=pb.EncodedObject(encoding="json", payload=payload)),
            request_id=request_id,
            is_transactional=rpc == "send_user_message",
        )
        response = stub.InvokeRPC(request, timeout=30)
        return bytes(response.SerializeToString())


def test_duplicate_request_ids_give_the_same_answer_and_change_nothing(idle: Idle) -> None:
    @settings(FUZZ, max_examples=min(FUZZ.max_examples, 30))
    @given(BLANK, st.uuids().map(str))
    def check(blank: str, request_id: str) -> None:
        payload = encode_agent_user_message(UserMessage(text=blank)).encode("utf-8")
        first = _unchanged(idle, lambda: _invoke(idle, "send_user_message", payload, request_id))
        again = _unchanged(idle, lambda: _invoke(idle, "send_user_message", payload, request_id))
        assert isinstance(first, bytes), first
        assert first == again

    check()


def test_a_duplicate_request_id_stores_one_message(idle: Idle) -> None:
    """dexlite answers a replayed InvokeRPC request ID with its first output
    (python/dexlite/README.md, "Replays"), even without a client request ID."""
    h = idle.harness
    request_id = str(uuid.uuid4())
    payload = encode_agent_user_message(UserMessage(text="once")).encode("utf-8")
    first = _invoke(idle, "send_user_message", payload, request_id)
    again = _invoke(idle, "send_user_message", payload, request_id)
    assert first == again
    # A marker sent after both: the queue is FIFO, so once its answer is stored
    # every message accepted before it has had its turn.
    assert h.client.send_user_message(idle.session, "marker")

    def settled(snap: AgentSnapshot) -> bool:
        texts = [m.text for m in snap.messages]
        return (
            "marker" in texts
            and texts.index("marker") < len(texts) - 1
            and snap.state is not None
            and snap.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
        )

    done = h.wait_snapshot(idle.session, settled, what="the marker's turn")
    stored = [m.text for m in done.messages]
    assert stored.count("once") == 1, f"stored messages: {stored}"


# --- known bugs ------------------------------------------------------------------------

_NOT_JSON: list[object] = [datetime(2026, 1, 1, tzinfo=UTC), {1, 2}, (1, 2), b"x", object()]


class BareAssertionError(Exception):
    """The bug: a bare AssertionError('') escaped instead of the documented answer."""


def _no_bare_assertion(outcome: object) -> object:
    if isinstance(outcome, AssertionError) and not str(outcome):
        raise BareAssertionError(repr(outcome))
    return outcome


def test_update_session_settings_refuses_non_json_values(idle: Idle) -> None:
    for value in _NOT_JSON:
        settings_ = {"when": value}
        update = functools.partial(
            idle.harness.client.update_session_settings, idle.session, settings_
        )
        outcome = _unchanged(idle, update)
        _is_false(_no_bare_assertion(outcome))


def test_start_session_refuses_non_json_settings_clearly(idle: Idle) -> None:
    for value in _NOT_JSON:
        session = f"s-{uuid.uuid4().hex[:12]}"
        settings_ = {"v": value}
        start = functools.partial(
            idle.harness.client.start_session, session, "hi", session_settings=settings_
        )
        outcome = _unchanged(idle, start)
        _raised(_no_bare_assertion(outcome), UserError, WireFormatError, TypeError)
