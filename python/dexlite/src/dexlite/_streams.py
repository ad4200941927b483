"""Streams: best-effort, resumable, append-only logs keyed by (flow type, flow id, name).

Resume tokens are the row sequence as a decimal string; list page tokens are
``"before:<seq>"`` so newer writes never enter an existing older-page chain.
Streams have a database of their own (`_storage.stream_db_path`), and readers a
connection of their own that wakes only on appends: following a stream, or
writing one, never waits for an engine transaction.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from . import _caller, _errors

if TYPE_CHECKING:
    import sqlite3

    from ._storage import Database

_MAX_PAGE = 1000


class StreamStore:
    """Streams in `db`, a database with `_storage.STREAM_SCHEMA` and nothing else."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._reader, reader_lock = db.open_reader()
        self._appended = threading.Condition(reader_lock)

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

        The streams database commits without fsync (synchronous=NORMAL in WAL
        mode): an append survives a process crash, not necessarily a power loss,
        which best-effort streams allow. A running byte total per stream keeps an
        append independent of the stream's length.
        """
        blob = value.SerializeToString()
        key = (flow_type, flow_id, name)
        with self._db.transaction() as conn:
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
        with self._appended:
            self._appended.notify_all()

    def close(self) -> None:
        self._db.close()

    def adopt_legacy(self, main: Database) -> None:
        """Moves streams an older dexlite kept in the main database into this one.

        Rows keep their sequence numbers, so resume and page tokens stay valid, and
        the copy ignores rows already here, so a crash between the copy and the drop
        only repeats a harmless copy at the next start.
        """
        conn = main.conn
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name IN (?, ?)",
                ("streams", "stream_totals"),
            ).fetchall()
        }
        if "streams" in tables:
            rows = conn.execute(
                "SELECT seq, flow_type, flow_id, name, value, source, created_ms, size"
                " FROM streams ORDER BY seq"
            ).fetchall()
            with self._db.transaction() as target:
                target.executemany(
                    "INSERT OR IGNORE INTO streams(seq, flow_type, flow_id, name, value, source,"
                    " created_ms, size) VALUES (?,?,?,?,?,?,?,?)",
                    [tuple(row) for row in rows],
                )
                target.execute("DELETE FROM stream_totals")
                target.execute(
                    "INSERT INTO stream_totals(flow_type, flow_id, name, bytes)"
                    " SELECT flow_type, flow_id, name, SUM(size) FROM streams"
                    " GROUP BY flow_type, flow_id, name"
                )
        if tables:
            with main.transaction() as source:
                for table in sorted(tables):
                    source.execute(f"DROP TABLE {table}")

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
        with self._appended:
            while True:
                # fetchall ends the statement, and with it the read transaction, so the
                # next query sees later commits.
                rows = self._reader.execute(
                    "SELECT seq, value, source, created_ms FROM streams WHERE flow_type=?"
                    " AND flow_id=? AND name=? AND seq>? ORDER BY seq LIMIT 1",
                    (flow_type, flow_id, name, after),
                ).fetchall()
                if rows:
                    return self._message(rows[0])
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise _errors.long_poll_timeout("a stream message")
                _caller.check_waiting()
                self._appended.wait(min(remaining, _caller.WAIT_SLICE_SECONDS))

    def list(
        self, *, flow_type: str, flow_id: str, name: str, page_size: int, token: str
    ) -> tuple[list[pb.StreamMessage], str]:
        if page_size <= 0:
            raise _errors.invalid("page_size must be positive")
        size = min(page_size, _MAX_PAGE)
        with self._appended:
            key = (flow_type, flow_id, name)
            if token:
                if not token.startswith("before:"):
                    raise _errors.invalid("before_page_token is malformed")
                before = _parse_seq(token[len("before:") :], "before_page_token")
                oldest = self._reader.execute(
                    "SELECT MIN(seq) FROM streams WHERE flow_type=? AND flow_id=? AND name=?", key
                ).fetchall()[0][0]
                if oldest is None or before <= oldest:
                    return [], ""
            else:
                before = 2**62
            rows = self._reader.execute(
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
