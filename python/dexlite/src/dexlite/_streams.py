"""Streams: best-effort, resumable, append-only logs keyed by (flow type, flow id, name) (§9).

Resume tokens are the row sequence as a decimal string; list page tokens are
``"before:<seq>"`` so newer writes never enter an existing older-page chain.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from . import _errors

if TYPE_CHECKING:
    import sqlite3
    import threading

    from ._storage import Database

_MAX_PAGE = 1000


class StreamStore:
    def __init__(self, db: Database, changed: threading.Condition) -> None:
        self._db = db
        self._changed = changed

    def append(
        self,
        *,
        flow_type: str,
        flow_id: str,
        name: str,
        capacity: int,
        value: pb.Value,
        source: str,
    ) -> None:
        """Appends, then trims the oldest messages down to ``capacity`` bytes (keeping one).

        Not fsynced on its own: streams are best effort, and the next durable
        commit syncs the write. A running byte total per stream keeps an append
        independent of the stream's length.
        """
        blob = value.SerializeToString()
        key = (flow_type, flow_id, name)
        with self._db.transaction(durable=False) as conn:
            newest = conn.execute(
                "INSERT INTO streams(flow_type, flow_id, name, value, source, created_ms, size)"
                " VALUES (?,?,?,?,?,?,?)",
                (*key, blob, source, int(time.time() * 1000), len(blob)),
            ).lastrowid
            total = _stream_bytes(conn, key, added=len(blob))
            if 0 < capacity < total:
                total = _trim(conn, key, newest, total, capacity)
            conn.execute(
                "INSERT INTO stream_totals(flow_type, flow_id, name, bytes) VALUES (?,?,?,?)"
                " ON CONFLICT(flow_type, flow_id, name) DO UPDATE SET bytes=excluded.bytes",
                (*key, total),
            )
        with self._changed:
            self._changed.notify_all()

    def _message(self, row: tuple[int, bytes, str, int]) -> pb.StreamMessage:
        seq, blob, source, created_ms = row
        message = pb.StreamMessage(resume_token=str(seq), source=source)
        message.value.ParseFromString(blob)
        message.created_time.FromMilliseconds(created_ms)
        return message

    def read(
        self, *, flow_type: str, flow_id: str, name: str, token: str, wait_seconds: float
    ) -> pb.StreamMessage:
        after = _parse_seq(token, "resume_token") if token else 0
        deadline = time.monotonic() + wait_seconds
        with self._changed:
            while True:
                row = self._db.conn.execute(
                    "SELECT seq, value, source, created_ms FROM streams WHERE flow_type=?"
                    " AND flow_id=? AND name=? AND seq>? ORDER BY seq LIMIT 1",
                    (flow_type, flow_id, name, after),
                ).fetchone()
                if row is not None:
                    return self._message(row)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _errors.long_poll_timeout("a stream message")
                self._changed.wait(remaining)

    def list(
        self, *, flow_type: str, flow_id: str, name: str, page_size: int, token: str
    ) -> tuple[list[pb.StreamMessage], str]:
        if page_size <= 0:
            raise _errors.invalid("page_size must be positive")
        size = min(page_size, _MAX_PAGE)
        with self._db.lock:
            key = (flow_type, flow_id, name)
            if token:
                if not token.startswith("before:"):
                    raise _errors.invalid("before_page_token is malformed")
                before = _parse_seq(token[len("before:") :], "before_page_token")
                oldest = self._db.conn.execute(
                    "SELECT MIN(seq) FROM streams WHERE flow_type=? AND flow_id=? AND name=?", key
                ).fetchone()[0]
                if oldest is None or before <= oldest:
                    return [], ""
            else:
                before = 2**62
            rows = self._db.conn.execute(
                "SELECT seq, value, source, created_ms FROM streams WHERE flow_type=? AND"
                " flow_id=? AND name=? AND seq<? ORDER BY seq DESC LIMIT ?",
                (*key, before, size + 1),
            ).fetchall()
        messages = [self._message(r) for r in rows[:size]]
        next_token = f"before:{rows[size - 1][0]}" if len(rows) > size else ""
        return messages, next_token


def _stream_bytes(conn: sqlite3.Connection, key: tuple[str, str, str], *, added: int) -> int:
    """Payload bytes of the stream, the row just inserted included."""
    row = conn.execute(
        "SELECT bytes FROM stream_totals WHERE flow_type=? AND flow_id=? AND name=?", key
    ).fetchone()
    if row is not None:
        return int(row[0]) + added
    # A stream written before totals were kept: count it once.
    return int(
        conn.execute(
            "SELECT COALESCE(SUM(size), 0) FROM streams WHERE flow_type=? AND flow_id=? AND name=?",
            key,
        ).fetchone()[0]
    )


def _trim(
    conn: sqlite3.Connection,
    key: tuple[str, str, str],
    newest: int | None,
    total: int,
    capacity: int,
) -> int:
    """Deletes the oldest messages until `total` fits `capacity`, never the newest one."""
    cutoff = None
    rows = conn.execute(
        "SELECT seq, size FROM streams WHERE flow_type=? AND flow_id=? AND name=? AND seq<?"
        " ORDER BY seq",
        (*key, newest),
    )
    try:
        for seq, size in rows:
            if total <= capacity:
                break
            total -= size
            cutoff = seq
    finally:
        rows.close()
    if cutoff is not None:
        conn.execute(
            "DELETE FROM streams WHERE flow_type=? AND flow_id=? AND name=? AND seq<=?",
            (*key, cutoff),
        )
    return total


def _parse_seq(text: str, field: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise _errors.invalid(f"{field} is malformed") from None
