"""The replay store without a server: its window, a window of 0, and a replay that
overtakes the first call of its request ID.

These reach `dexlite._api.replays` directly: the window is hours long on a real
server, and whether a replay waited for its first call cannot be seen from a
client. The server-level behaviour of each method is in test_replays.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dexlite._api.replays import Replays
from dexlite._errors import ServiceError
from dexlite._options import ServerOptions
from dexlite._storage import Database

WINDOW = 60.0


class WaitSeen(threading.Condition):
    """A Condition that says when somebody waits on it."""

    def __init__(self, lock: Any) -> None:
        super().__init__(lock)
        self.waiting = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.waiting.set()
        return super().wait(timeout)


@dataclass
class Clock:
    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Store:
    replays: Replays
    db: Database
    clock: Clock
    changed: WaitSeen


def _store(window: float = WINDOW) -> Store:
    db = Database(":memory:")
    changed = WaitSeen(db.lock)
    state = SimpleNamespace(
        options=ServerOptions(request_id_window_seconds=window), changed=changed, db=db
    )
    clock = Clock()
    return Store(Replays(state, clock), db, clock, changed)  # type: ignore[arg-type]


@pytest.fixture
def store() -> Iterator[Store]:
    made = _store()
    yield made
    made.db.close()


def _request(amount: int, request_id: str = "r1") -> pb.InvokeRPCRequest:
    return pb.InvokeRPCRequest(
        flow_id="f", rpc_name="add", input=pb.Value(int_value=amount), request_id=request_id
    )


def _answer(store: Store, request: pb.InvokeRPCRequest) -> bytes | None:
    with store.db.transaction() as conn:
        return store.replays.lookup(conn, "InvokeRPC", request, "f", request.request_id).response


def _remember(store: Store, request: pb.InvokeRPCRequest, response: bytes) -> None:
    with store.db.transaction() as conn:
        replay = store.replays.lookup(conn, "InvokeRPC", request, "f", request.request_id)
        store.replays.record(conn, replay, response)


def test_a_response_answers_replays_until_the_window_ends(store: Store) -> None:
    _remember(store, _request(5), b"five")
    store.clock.now += WINDOW - 1
    assert _answer(store, _request(5)) == b"five"
    store.clock.now += 1
    assert _answer(store, _request(5)) is None
    # Past the window the ID is free again, and the next record drops the old row.
    _remember(store, _request(6, "r2"), b"six")
    rows = store.db.conn.execute("SELECT request_id FROM request_ids").fetchall()
    assert [row[0] for row in rows] == ["r2"]


def test_a_request_id_that_answered_another_request_is_refused(store: Store) -> None:
    _remember(store, _request(5), b"five")
    with pytest.raises(ServiceError) as info:
        _answer(store, _request(6))
    assert info.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.detail == (
        "request_id 'r1' of flow 'f' already answered another InvokeRPC request"
    )


def test_a_window_of_zero_remembers_nothing() -> None:
    store = _store(window=0)
    try:
        _remember(store, _request(5), b"five")
        assert _answer(store, _request(5)) is None
        assert store.db.conn.execute("SELECT COUNT(*) FROM request_ids").fetchone()[0] == 0
    finally:
        store.db.close()


def test_a_replay_waits_for_its_first_call_and_gets_its_response(store: Store) -> None:
    request = _request(5)
    first_inside = threading.Event()
    release = threading.Event()
    seen: dict[str, bytes | None] = {}

    def first() -> None:
        with store.replays.first_call("InvokeRPC", request, "f", "r1", 30) as replay:
            seen["first"] = replay.response
            first_inside.set()
            release.wait(30)
            with store.db.transaction() as conn:
                store.replays.record(conn, replay, b"five")

    def replay() -> None:
        with store.replays.first_call("InvokeRPC", request, "f", "r1", 30) as again:
            seen["replay"] = again.response

    one = threading.Thread(target=first)
    one.start()
    assert first_inside.wait(30)
    two = threading.Thread(target=replay)
    two.start()
    assert store.changed.waiting.wait(30), "the replay did not wait for its first call"
    assert "replay" not in seen
    release.set()
    one.join(30)
    two.join(30)
    assert seen == {"first": None, "replay": b"five"}


def test_a_replay_of_a_first_call_that_failed_runs_itself(store: Store) -> None:
    request = _request(5)
    with pytest.raises(RuntimeError), store.replays.first_call("InvokeRPC", request, "f", "r1", 30):
        raise RuntimeError("the Worker failed")
    with store.replays.first_call("InvokeRPC", request, "f", "r1", 30) as again:
        assert again.response is None
