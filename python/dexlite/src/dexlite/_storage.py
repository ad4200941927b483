"""SQLite schemas and the single-writer connection.

Protocol messages are stored as serialized protobuf blobs: the server treats
values as opaque, and storing the wire bytes keeps them byte-identical. Streams
live in a database file of their own (`stream_db_path`): they are best effort and
independent of flows, so their appends neither wait for an engine
transaction's fsync nor hold one up.
"""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Literal

import grpc

from dexlite._errors import ServiceError

if TYPE_CHECKING:
    from collections.abc import Iterator

SyncMode = Literal["full", "normal"]

_UNWRITABLE = frozenset(
    {
        sqlite3.SQLITE_FULL,  # no space left, or the file size limit
        sqlite3.SQLITE_READONLY,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PERM,
    }
)
"""SQLite's primary result codes for "the disk refused the write"."""


class StorageError(ServiceError):
    """The database file cannot be written (full disk, read-only file, I/O error).

    UNAVAILABLE, because nothing is wrong with the request: the same call works
    once the disk has room or the file is writable again. The transaction that
    met it is rolled back, so the stored state stays what the last commit left.
    """

    def __init__(self, path: str, error: sqlite3.Error) -> None:
        super().__init__(
            grpc.StatusCode.UNAVAILABLE, f"dexlite cannot write its database {path}: {error}"
        )


def unwritable(error: sqlite3.Error) -> bool:
    """Whether `error` says the disk refused a write, rather than a bug in a statement."""
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(code, int) and (code & 0xFF) in _UNWRITABLE


_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL UNIQUE,
  flow_id TEXT NOT NULL,
  flow_type TEXT NOT NULL,
  status INTEGER NOT NULL,
  request_id TEXT NOT NULL,
  start_ts REAL NOT NULL,
  close_ts REAL,
  config BLOB NOT NULL,
  timeout_at REAL,
  timeout_policy INTEGER NOT NULL DEFAULT 0,
  handler_options BLOB,
  error_type INTEGER NOT NULL DEFAULT 0,
  error_message TEXT NOT NULL DEFAULT '',
  graceful INTEGER NOT NULL DEFAULT 0,
  event_seq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_flow ON runs(flow_id, seq);
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);

CREATE TABLE IF NOT EXISTS attrs (
  run_id TEXT NOT NULL,
  key TEXT NOT NULL,
  value BLOB NOT NULL,
  index_key TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, key)
);

CREATE TABLE IF NOT EXISTS msgs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  channel TEXT NOT NULL,
  message_id TEXT NOT NULL,
  value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS msgs_channel ON msgs(run_id, channel, seq);

CREATE TABLE IF NOT EXISTS counters (
  run_id TEXT NOT NULL,
  step_type TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_type)
);

CREATE TABLE IF NOT EXISTS steps (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  exec_id TEXT NOT NULL,
  step_type TEXT NOT NULL,
  from_id TEXT NOT NULL,
  state TEXT NOT NULL,
  outcome TEXT NOT NULL DEFAULT '',
  movement BLOB NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  first_attempt_ts REAL NOT NULL DEFAULT 0,
  method_started_ts REAL NOT NULL DEFAULT 0,
  next_due REAL NOT NULL DEFAULT 0,
  lock_order INTEGER NOT NULL DEFAULT 0,
  locks_held INTEGER NOT NULL DEFAULT 0,
  snapshot BLOB,
  hb_value BLOB,
  locals BLOB,
  condition BLOB,
  wait_seq INTEGER NOT NULL DEFAULT 0,
  cond_results BLOB,
  method_error BLOB,
  last_failure BLOB,
  UNIQUE (run_id, exec_id)
);
CREATE INDEX IF NOT EXISTS steps_state ON steps(state);
CREATE INDEX IF NOT EXISTS steps_run ON steps(run_id, state);

-- A single-attempt method call that may have reached a Worker (_engine/handouts.py).
CREATE TABLE IF NOT EXISTS handouts (
  run_id TEXT NOT NULL,
  exec_id TEXT NOT NULL,
  method TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  PRIMARY KEY (run_id, exec_id)
);

CREATE TABLE IF NOT EXISTS timers (
  run_id TEXT NOT NULL,
  exec_id TEXT NOT NULL,
  idx INTEGER NOT NULL,
  condition_id TEXT NOT NULL,
  fire_at REAL NOT NULL,
  status INTEGER NOT NULL,
  PRIMARY KEY (run_id, exec_id, idx)
);
CREATE INDEX IF NOT EXISTS timers_due ON timers(status, fire_at);

CREATE TABLE IF NOT EXISTS outputs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL,
  step_type TEXT NOT NULL,
  exec_id TEXT NOT NULL,
  value BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS outputs_run ON outputs(run_id, seq);

CREATE TABLE IF NOT EXISTS history (
  run_id TEXT NOT NULL,
  event_id INTEGER NOT NULL,
  payload BLOB NOT NULL,
  PRIMARY KEY (run_id, event_id)
);

-- Mutating calls by request ID (InvokeRPC, SetAttributes, DeleteChannelMessage), written
-- with their effect, so a replay within the window gets the stored response and applies
-- nothing. `digest` is the SHA-256 of the request without its request ID. (Databases of
-- an older dexlite also hold an unused `external_deletes` table.)
CREATE TABLE IF NOT EXISTS request_ids (
  flow_id TEXT NOT NULL,
  request_id TEXT NOT NULL,
  method TEXT NOT NULL,
  digest BLOB NOT NULL,
  response BLOB NOT NULL,
  created_at REAL NOT NULL,
  PRIMARY KEY (flow_id, request_id)
);
CREATE INDEX IF NOT EXISTS request_ids_age ON request_ids(created_at);

CREATE TABLE IF NOT EXISTS indexes (
  key TEXT PRIMARY KEY,
  type INTEGER NOT NULL
);
"""

STREAM_SCHEMA = """
CREATE TABLE IF NOT EXISTS streams (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  flow_type TEXT NOT NULL,
  flow_id TEXT NOT NULL,
  name TEXT NOT NULL,
  value BLOB NOT NULL,
  source TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  size INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS streams_key ON streams(flow_type, flow_id, name, seq);

-- Payload bytes kept per stream, so an append trims without summing the stream.
CREATE TABLE IF NOT EXISTS stream_totals (
  flow_type TEXT NOT NULL,
  flow_id TEXT NOT NULL,
  name TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (flow_type, flow_id, name)
);
"""


def is_in_memory(db_path: str) -> bool:
    return db_path == ":memory:" or db_path.startswith("file::memory:")


def stream_db_path(db_path: str) -> str:
    """Where the streams of the database at `db_path` are kept."""
    return ":memory:" if is_in_memory(db_path) else f"{db_path}-streams"


class Database:
    """One SQLite connection guarded by the engine lock.

    dexlite has exactly one writer, so a single connection plus an RLock is
    both the simplest and the fastest arrangement: no SQLITE_BUSY handling,
    and a transaction is never interleaved with another thread's statements.
    """

    def __init__(self, path: str, sync: SyncMode = "full", schema: str = _SCHEMA) -> None:
        """Opens (or creates) the database; StorageError when it cannot be written."""
        self.path = path
        self.lock = threading.RLock()
        try:
            self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute("PRAGMA journal_mode=WAL")
            # FULL: a commit is on disk before anything is acknowledged, also across
            # power loss. NORMAL in WAL mode survives process crashes (SIGKILL), which
            # is what tests exercise; it is offered for faster local runs.
            synchronous = "FULL" if sync == "full" else "NORMAL"
            self.conn.execute(f"PRAGMA synchronous={synchronous}")
            self.conn.execute("PRAGMA foreign_keys=OFF")
            self.conn.executescript(schema)
            # Creating the schema writes nothing when it exists: prove the file takes writes.
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("COMMIT")
        except sqlite3.Error as error:
            if unwritable(error):
                raise StorageError(path, error) from error
            raise
        self._depth = 0
        self._readers: list[tuple[sqlite3.Connection, threading.RLock]] = []

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Runs a write transaction; nested uses join the outer one."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                self._depth = 1
                try:
                    yield self.conn
                except BaseException:
                    self._rollback()
                    raise
                self._depth = 0
                self.conn.execute("COMMIT")
            except sqlite3.Error as error:
                self._rollback()
                if unwritable(error):
                    raise StorageError(self.path, error) from error
                raise

    def _rollback(self) -> None:
        """Ends a failed transaction; SQLite may already have rolled it back (SQLITE_FULL)."""
        self._depth = 0
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def open_reader(self) -> tuple[sqlite3.Connection, threading.RLock]:
        """A read-only connection and the lock that guards it, for readers that
        should not queue behind the engine's transactions.

        WAL mode lets it read the last commit while the writer works. An
        in-memory database has no second view, so it gets the writer's own pair.
        """
        if is_in_memory(self.path):
            return self.conn, self.lock
        reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        reader.execute("PRAGMA query_only=1")
        guard = threading.RLock()
        self._readers.append((reader, guard))
        return reader, guard

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def close(self) -> None:
        for reader, guard in self._readers:
            with guard:
                reader.close()
        with self.lock:
            self.conn.close()
