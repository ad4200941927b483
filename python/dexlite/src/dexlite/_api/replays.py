"""Replays of mutating calls by request ID: within the window, the first response again.

A client that lost a reply cannot tell whether its call committed, so it sends
the same request with the same ``request_id``. InvokeRPC, SetAttributes and
DeleteChannelMessage store their response under (flow ID, request ID) in the
transaction of their effect; a replay inside ``request_id_window_seconds``
gets that response and applies nothing. The same ID with a different request
(another method, or other fields) is INVALID_ARGUMENT. Only a call that
committed an effect is remembered: one that failed, or an RPC that applied
nothing, stored nothing, so its replay runs as a new call (which cannot apply
anything twice either). StartFlow keeps its request ID on the run instead
(§3.2). Old rows are deleted by the next call that stores one.
"""

from __future__ import annotations

import hashlib
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

from dexlite import _caller, _errors

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

    from dexlite._engine import EngineState

__all__ = ["Replay", "Replays", "request_digest"]


def request_digest(request: Message) -> bytes:
    """SHA-256 of the request's deterministic bytes, its ``request_id`` left out."""
    copy = type(request)()
    copy.CopyFrom(request)
    copy.ClearField("request_id")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).digest()


@dataclass(frozen=True)
class Replay:
    """What a call learned about its request ID before it ran."""

    method: str
    flow_id: str
    request_id: str
    digest: bytes
    response: bytes | None
    """The stored response of the first call; None when this call is the first."""


class Replays:
    """Stored responses by request ID, and the InvokeRPC calls still running."""

    def __init__(self, state: EngineState, clock: Callable[[], float] = time.time) -> None:
        self._state = state
        self._clock = clock
        self._running: set[tuple[str, str]] = set()

    @property
    def enabled(self) -> bool:
        return self._state.options.request_id_window_seconds > 0

    def lookup(
        self, conn: sqlite3.Connection, method: str, request: Message, flow_id: str, request_id: str
    ) -> Replay:
        """The replay facts of `request`, read under the engine lock.

        INVALID_ARGUMENT when its request ID answered another request.
        """
        digest = request_digest(request)
        response = None
        if self.enabled and request_id:
            row = conn.execute(
                "SELECT method, digest, response FROM request_ids"
                " WHERE flow_id=? AND request_id=? AND created_at>?",
                (flow_id, request_id, self._oldest()),
            ).fetchone()
            if row is not None:
                if row["method"] != method or bytes(row["digest"]) != digest:
                    raise _errors.invalid(
                        f"request_id {request_id!r} of flow {flow_id!r} already answered "
                        f"another {row['method']} request"
                    )
                response = bytes(row["response"])
        return Replay(method, flow_id, request_id, digest, response)

    def record(self, conn: sqlite3.Connection, replay: Replay, response: bytes) -> None:
        """Stores the first call's response in the transaction of its effect."""
        if not self.enabled or not replay.request_id:
            return
        conn.execute("DELETE FROM request_ids WHERE created_at<=?", (self._oldest(),))
        conn.execute(
            "INSERT OR REPLACE INTO request_ids VALUES (?,?,?,?,?,?)",
            (
                replay.flow_id,
                replay.request_id,
                replay.method,
                replay.digest,
                response,
                self._clock(),
            ),
        )

    @contextmanager
    def first_call(
        self, method: str, request: Message, flow_id: str, request_id: str, budget: float
    ) -> Iterator[Replay]:
        """The replay facts of a call that runs outside the engine lock (InvokeRPC).

        A replay that arrives while the first call still runs waits for it, up to
        `budget` seconds, and then reads its stored response; while this call runs,
        its ID is held the same way.
        """
        key = (flow_id, request_id)
        state = self._state
        deadline = time.monotonic() + budget
        with state.changed:
            while self.enabled and key in self._running:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _errors.ServiceError(
                        grpc.StatusCode.UNAVAILABLE,
                        f"request_id {request_id!r} of flow {flow_id!r} is still being served",
                    )
                _caller.check_waiting()
                state.changed.wait(min(remaining, _caller.WAIT_SLICE_SECONDS))
            replay = self.lookup(state.db.conn, method, request, flow_id, request_id)
            holding = self.enabled and bool(key[1]) and replay.response is None
            if holding:
                self._running.add(key)
        try:
            yield replay
        finally:
            if holding:
                with state.changed:
                    self._running.discard(key)
                    state.changed.notify_all()

    def _oldest(self) -> float:
        return self._clock() - self._state.options.request_id_window_seconds
