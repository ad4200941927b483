"""Property-based fuzzing of every FlowService method of a dexlite child process.

Requests are generated from the protobuf descriptors (every field kind, nested
messages, repeated fields, maps and oneofs), with ids that are unknown, empty,
unicode, hold `/` or name the one stopped Flow the database holds, negative and
extreme numbers, unknown enum numbers, and in a third of the requests one large
string, bytes value or map key somewhere (70,000 long, or over dexlite's value
limit). Every call must end with a gRPC status other than UNKNOWN or INTERNAL
(which mean an uncaught exception), the server must keep serving, and a call
that fails must leave the database exactly as it was (a digest of every
table's rows before and after).

`DEX_AGENTS_FUZZ=long` runs 10,000 cases per method, or `DEX_AGENTS_FUZZ_CASES`
(see the dexlite README).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess
from google.protobuf import empty_pb2, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.integration

LONG = os.environ.get("DEX_AGENTS_FUZZ") == "long"
settings.register_profile(
    "dex-fuzz-grpc-ci",
    max_examples=30,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dex-fuzz-grpc-long",
    # DEX_AGENTS_FUZZ_CASES splits a long run into sittings (the default takes hours).
    max_examples=int(os.environ.get("DEX_AGENTS_FUZZ_CASES", "10000")),
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings.get_profile("dex-fuzz-grpc-long" if LONG else "dex-fuzz-grpc-ci")

SERVICE = pb.DESCRIPTOR.services_by_name["FlowService"]
METHODS = sorted(m.name for m in SERVICE.methods)
# Long polls may legitimately wait out the client's deadline on the stopped Flow.
LONG_POLLS = {
    "ReadStream",
    "WaitForAttribute",
    "WaitForFlow",
    "WaitForHistoryEvent",
    "WaitForStepCompletion",
}
LONG_POLL_TIMEOUT = 0.25
# Generous for everything else: a busy machine must not read as a hang.
CALL_TIMEOUT = 30.0
REFUSED_CODES = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}

FLOW_ID = "fuzz-stopped"
FLOW_TYPE = "FuzzFlow"


@dataclass
class Server:
    process: DexliteProcess
    db: Path
    stub: dex_pb2_grpc.FlowServiceStub
    run_id: str
    watcher: sqlite3.Connection
    """Our own read connection: its data_version moves with every commit dexlite makes."""
    snapshot: sqlite3.Connection
    """Holds a read transaction open on the state of the last `pin` (WAL keeps it for
    us): a refused call that commits is compared with it, and pinning costs nothing
    however large the accepted calls make the database."""

    def digest(self) -> bytes:
        with contextlib.closing(sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)) as conn:
            return database_digest(conn)

    def pinned_digest(self) -> bytes:
        return database_digest(self.snapshot)

    def commits_seen(self) -> int:
        return int(self.watcher.execute("PRAGMA data_version").fetchone()[0])

    def pin(self) -> int:
        """Pins the current state; returns the commit count it includes at least."""
        version = self.commits_seen()
        if self.snapshot.in_transaction:
            self.snapshot.execute("ROLLBACK")
        self.snapshot.execute("BEGIN")
        self.snapshot.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return version


def database_digest(conn: sqlite3.Connection) -> bytes:
    """A hash of the schema and every row, streamed: unlike an SQL dump it needs no
    text of the whole database, which every Flow StartFlow accepts makes larger."""
    digest = hashlib.blake2b()
    tables = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
    for kind, name, sql in tables.fetchall():
        digest.update(f"\0{kind}\0{name}\0{sql}\0".encode())
        if kind != "table":
            continue
        for row in conn.execute(f'SELECT * FROM "{name}"'):
            for value in row:
                if isinstance(value, bytes):
                    digest.update(b"\1b%d:" % len(value) + value)
                elif isinstance(value, str):
                    encoded = value.encode("utf-8", "surrogatepass")
                    digest.update(b"\1s%d:" % len(encoded) + encoded)
                else:
                    digest.update(b"\1" + repr(value).encode())
            digest.update(b"\2")
    return digest.digest()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("fuzz-grpc") / "fuzz.sqlite"
    process = DexliteProcess(str(db)).start()
    channel = grpc.insecure_channel(
        process.address, options=[("grpc.max_send_message_length", 16 << 20)]
    )
    stub = dex_pb2_grpc.FlowServiceStub(channel)
    # One Flow that ids can hit; stopped, so nothing changes the database behind our back.
    started = stub.StartFlow(
        pb.StartFlowRequest(
            flow_id=FLOW_ID, flow_type=FLOW_TYPE, start_step_type="Start", request_id="r-start"
        ),
        timeout=30,
    )
    stub.StopFlow(_stop(FLOW_ID), timeout=30)
    watcher = sqlite3.connect(db)
    snapshot = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    yield Server(process, db, stub, started.run_id, watcher, snapshot)
    snapshot.close()
    watcher.close()
    channel.close()
    assert process.stop() == 0


# --- requests from descriptors ---------------------------------------------------------

_BIG = 3 << 20  # over dexlite's value limit, under the transport's 4 MiB
_LONG = 70_000  # long for an id or a name, well under the value limit
# One shared object each, and at most one large field per request (see
# `with_one_large`): as leaf choices they landed on many string leaves of a deep
# request, so a StartFlow case held tens of MiB, and each one accepted grew the
# database by MiBs.
_HUGE_TEXT = "z" * _BIG
_HUGE_BYTES = b"x" * _BIG
_LONG_TEXT = "y" * _LONG
_LONG_BYTES = b"w" * _LONG
_EDGE_STRINGS = [
    "",
    " ",
    "/",
    "a/b",
    "..",
    "\x00",
    "\u2028",
    "\U0001f600",
    "\ufffe",
    FLOW_ID,
    FLOW_TYPE,
    "Start",
    "x" * 300,
]


def _strings(run_id: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from([*_EDGE_STRINGS, run_id]),
        st.text(st.characters(exclude_categories=["Cs"]), max_size=16),
    )


_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    edges = [v for v in (low, high, -1, 0, 1, 2**31 - 1, -(2**31), 10**9) if low <= v <= high]
    return st.one_of(
        st.sampled_from(edges),
        st.integers(low, high),
        st.integers(-5, 100).filter(lambda v: low <= v <= high),
    )


def _scalar(field: FieldDescriptor, run_id: str) -> st.SearchStrategy[Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return _strings(run_id)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.one_of(
            st.binary(max_size=32),
            st.sampled_from([b"{}", b"null", b'{"a":1}', b"\xff\xfe"]),
        )
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(width=32 if kind == FieldDescriptor.TYPE_FLOAT else 64)
    if kind == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-(2**31), 2**31 - 1))
    low, high = _INT_RANGES[kind]
    return _integers(low, high)


def _set_field(message: Any, field: FieldDescriptor, value: Any) -> None:
    target = getattr(message, field.name)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        for key, item in value:
            if value_field.message_type is not None:
                target[key].CopyFrom(item)
            else:
                target[key] = item
    elif field.is_repeated:
        if field.message_type is not None:
            for item in value:
                target.add().CopyFrom(item)
        else:
            target.extend(value)
    elif field.message_type is not None:
        target.CopyFrom(value)
    else:
        setattr(message, field.name, value)


def _field_values(field: FieldDescriptor, run_id: str, depth: int) -> st.SearchStrategy[Any]:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        key = _value_strategy(field.message_type.fields_by_name["key"], run_id, depth + 1)
        value = _value_strategy(field.message_type.fields_by_name["value"], run_id, depth + 1)
        return st.lists(st.tuples(key, value), max_size=3)
    single = _value_strategy(field, run_id, depth)
    return st.lists(single, max_size=3) if field.is_repeated else single


def _value_strategy(field: FieldDescriptor, run_id: str, depth: int) -> st.SearchStrategy[Any]:
    if field.message_type is not None:
        return requests(field.message_type, run_id, depth + 1)
    return _scalar(field, run_id)


def _lazy(field: FieldDescriptor, run_id: str, depth: int) -> st.SearchStrategy[Any]:
    return st.deferred(lambda: _field_values(field, run_id, depth))


def requests(descriptor: Descriptor, run_id: str, depth: int = 0) -> st.SearchStrategy[Any]:
    """Messages of `descriptor` with any subset of fields set, nested up to depth 3."""
    cls = message_factory.GetMessageClass(descriptor)
    fields = [f for f in descriptor.fields if depth < 3 or f.message_type is None]
    if not fields:
        return st.just(cls())
    values = {f.name: _lazy(f, run_id, depth) for f in fields}

    def build(chosen: dict[str, Any]) -> Any:
        message = cls()
        for name, value in chosen.items():
            _set_field(message, descriptor.fields_by_name[name], value)
        return message

    return st.fixed_dictionaries({}, optional=values).map(build)


def _good_values(run_id: str) -> dict[str, object]:
    """Well-formed values by field name, for requests that are wrong in one place only."""
    return {
        "flow_id": FLOW_ID,
        "run_id": run_id,
        "flow_type": FLOW_TYPE,
        "request_id": "req-fuzz",
        "channel_name": "inbox",
        "stream_name": "events",
        "step_type": "Start",
        "start_step_type": "Start",
        "step_execution_number": "1",
        "step_execution_id": "Start-1",
        "rpc_name": "ping",
        "key": "Key",
        "reason": "fuzz",
        "message_id": "m-1",
        "encoding": "json",
        "payload": b"{}",
        "stop_type": pb.STOP_TYPE_TERMINATE,
        "page_size": 10,
        "estimate_page_size": 10,
        "wait_time_seconds": 1,
        "request_timeout_seconds": 1,
        "timeout_seconds": 1,
        "stream_capacity_bytes": 4096,
    }


def _fill(message: Any, good: dict[str, object], spare: str) -> None:
    for field in message.DESCRIPTOR.fields:
        if field.name in good and field.name != spare and not field.is_repeated:
            setattr(message, field.name, good[field.name])
        elif field.message_type is not None and not field.message_type.GetOptions().map_entry:
            if field.is_repeated:
                for item in getattr(message, field.name):
                    _fill(item, good, spare)
            elif message.HasField(field.name):
                _fill(getattr(message, field.name), good, spare)


def near_valid(descriptor: Descriptor, run_id: str) -> st.SearchStrategy[Any]:
    """Random requests made well-formed wherever a good value is known, but for one field."""
    good = _good_values(run_id)

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        message = draw(requests(descriptor, run_id))
        spare = draw(st.sampled_from(sorted(good)))
        _fill(message, good, spare)
        return message

    return build()


_TEXTUAL = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)


def _large(field: FieldDescriptor, over: bool) -> str | bytes:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return _HUGE_BYTES if over else _LONG_BYTES
    return _HUGE_TEXT if over else _LONG_TEXT


def _set_large(message: Any, field: FieldDescriptor, over: bool) -> None:
    setattr(message, field.name, _large(field, over))


def _set_large_item(items: Any, index: int, field: FieldDescriptor, over: bool) -> None:
    if index < len(items):
        items[index] = _large(field, over)
    else:
        items.append(_large(field, over))


def _set_large_map_value(target: Any, key: Any, field: FieldDescriptor, over: bool) -> None:
    target[key] = _large(field, over)


def _set_large_map_key(target: Any, key: Any, over: bool) -> None:
    large = _HUGE_TEXT if over else _LONG_TEXT
    value = target[key]
    if hasattr(value, "CopyFrom"):
        kept = type(value)()
        kept.CopyFrom(value)
        del target[key]
        target[large].CopyFrom(kept)
    else:
        del target[key]
        target[large] = value


def _large_slots(message: Any) -> list[Callable[[bool], None]]:
    """Every place of `message` where one large string or bytes value can go."""
    slots: list[Callable[[bool], None]] = []
    for field in message.DESCRIPTOR.fields:
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            target = getattr(message, field.name)
            key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
            for key in list(target):
                if key_field.type == FieldDescriptor.TYPE_STRING:
                    slots.append(partial(_set_large_map_key, target, key))
                if value_field.message_type is not None:
                    slots.extend(_large_slots(target[key]))
                elif value_field.type in _TEXTUAL:
                    slots.append(partial(_set_large_map_value, target, key, value_field))
        elif entry is not None:
            if field.is_repeated:
                for item in getattr(message, field.name):
                    slots.extend(_large_slots(item))
            elif message.HasField(field.name):
                slots.extend(_large_slots(getattr(message, field.name)))
        elif field.type in _TEXTUAL:
            if field.is_repeated:
                items = getattr(message, field.name)
                for index in range(max(len(items), 1)):
                    slots.append(partial(_set_large_item, items, index, field))
            else:
                slots.append(partial(_set_large, message, field))
    return slots


def with_one_large(base: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Requests from `base` with one string or bytes field (or map key), wherever it can
    go, 70,000 long or over the value limit: both classes stay covered at any depth
    while a case holds one large value and an accepted one stays small."""

    @st.composite
    def build(draw: st.DrawFn) -> Any:
        message = draw(base)
        slots = _large_slots(message)
        if slots:
            draw(st.sampled_from(slots))(draw(st.booleans()))
        return message

    return build()


def cases(descriptor: Descriptor, run_id: str) -> st.SearchStrategy[Any]:
    """Random, near-valid and one-large-field requests of `descriptor`."""
    random, near = requests(descriptor, run_id), near_valid(descriptor, run_id)
    return st.one_of(random, near, with_one_large(st.one_of(random, near)))


# --- the property ----------------------------------------------------------------------


def _stop(flow_id: str) -> Any:
    return pb.StopFlowRequest(flow_id=flow_id, reason="fuzz", stop_type=pb.STOP_TYPE_TERMINATE)


def _call(server: Server, method: str, request: Any) -> grpc.StatusCode:
    call: Callable[..., Any] = getattr(server.stub, method)
    code = grpc.StatusCode.OK
    details = ""
    try:
        call(request, timeout=LONG_POLL_TIMEOUT if method in LONG_POLLS else CALL_TIMEOUT)
    except grpc.RpcError as error:
        code = error.code()
        details = error.details() or ""
    assert code not in REFUSED_CODES, f"{method}: {code} {details!r} for {request!r:.500}"
    return code


@pytest.mark.parametrize("method", METHODS)
def test_every_method_answers_bad_input_with_a_status(server: Server, method: str) -> None:
    descriptor = SERVICE.methods_by_name[method].input_type
    version = [server.pin()]
    outcomes: Counter[str] = Counter()

    @FUZZ
    @given(cases(descriptor, server.run_id))
    def check(request: Any) -> None:
        code = _call(server, method, request)
        outcomes[code.name] += 1
        if code == grpc.StatusCode.OK:
            # Well-formed after all: its change is allowed. A Flow it started is
            # stopped at once, so no dispatching changes the database later.
            if method == "StartFlow":
                _call(server, "StopFlow", _stop(request.flow_id))
            version[0] = server.pin()
            return
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            assert method in LONG_POLLS, f"{method} did not answer within {CALL_TIMEOUT}s"
        # No commit since the pin proves the database unchanged; after a commit,
        # its digest must still equal the pinned state's.
        if server.commits_seen() != version[0]:
            changed = server.digest() != server.pinned_digest()
            assert not changed, f"{method}: {code} changed the database"
            version[0] = server.pin()

    check()
    print(f"{method}: {dict(sorted(outcomes.items()))}")
    assert server.process.proc is not None
    assert server.process.proc.poll() is None, "dexlite exited"
    server.stub.GetServerInfo(empty_pb2.Empty(), timeout=30)


def test_the_pin_keeps_the_state_before_a_change_the_digest_sees(server: Server) -> None:
    """The property is only as strong as its check: an accepted call must show."""
    server.pin()
    before = server.digest()
    assert server.pinned_digest() == before
    flow_id = f"digest-{uuid.uuid4().hex[:8]}"
    started = pb.StartFlowRequest(
        flow_id=flow_id, flow_type=FLOW_TYPE, start_step_type="Start", request_id="r-digest"
    )
    assert _call(server, "StartFlow", started) == grpc.StatusCode.OK
    assert _call(server, "StopFlow", _stop(flow_id)) == grpc.StatusCode.OK
    after = server.digest()
    assert after != before
    assert server.pinned_digest() == before
    server.pin()
    assert server.pinned_digest() == after


def test_unknown_ids_are_not_found(server: Server) -> None:
    before = server.digest()
    unknown = f"no-such-{uuid.uuid4().hex[:8]}"
    for method, request in [
        ("GetFlowState", pb.GetFlowStateRequest(flow_id=unknown)),
        ("GetAttributes", pb.GetAttributesRequest(flow_id=unknown, all_keys=True)),
        ("GetFlowSummary", pb.GetFlowSummaryRequest(flow_id=unknown)),
    ]:
        assert _call(server, method, request) == grpc.StatusCode.NOT_FOUND
    assert server.digest() == before


def test_history_pages_refuse_a_negative_size_and_cap_a_huge_one(server: Server) -> None:
    """Found by the long run: a negative estimate_page_size was an internal error."""
    before = server.digest()
    request = pb.GetHistoryEventsRequest(
        flow_id=FLOW_ID, run_id=server.run_id, estimate_page_size=-(2**31)
    )
    with pytest.raises(grpc.RpcError) as refused:
        server.stub.GetHistoryEvents(request, timeout=CALL_TIMEOUT)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details() == "estimate_page_size must not be negative"
    huge = server.stub.GetHistoryEvents(
        pb.GetHistoryEventsRequest(
            flow_id=FLOW_ID, run_id=server.run_id, estimate_page_size=2**31 - 1
        ),
        timeout=CALL_TIMEOUT,
    )
    assert huge.events
    assert not huge.next_page_token
    assert server.digest() == before
