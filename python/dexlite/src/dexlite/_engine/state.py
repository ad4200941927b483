"""What the engine's parts share: the database, in-memory locks and caches, the clock.

Concurrency model: one engine lock (the database lock) serialises every state
change; each change is one SQLite transaction, committed before anything is
acknowledged or acted on. Worker calls run on a thread pool outside the lock
and re-enter it only to commit their outcome. SQLite is the source of truth;
memory holds only in-flight call handles, attribute locks (rebuilt from the
``locks_held`` column on start), heartbeat values not yet flushed, and copies of
committed method requests (read back from their rows when missing).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable, Iterator

    from dexlite._calls import CallHandle, Transport
    from dexlite._model import Method
    from dexlite._options import ServerOptions
    from dexlite._storage import Database
    from dexlite._streams import StreamStore

Request = pb.InvokeWaitForMethodRequest | pb.InvokeExecuteMethodRequest
StepKey = tuple[str, str]
"""(run_id, exec_id) of one step execution."""


@dataclass
class Inflight:
    """One method call a Worker is running; its key maps to it while it runs."""

    method: Method
    attempt: int
    handle: CallHandle
    flow_type: str
    flow_id: str


def _nothing() -> None:
    pass


@dataclass(eq=False)
class EngineState:
    """Shared by every engine module; only the engine lock's holder may change it."""

    db: Database
    options: ServerOptions
    changed: threading.Condition
    """Notified after every commit; long polls wait on it."""
    streams: StreamStore
    listening: Transport
    pull: Transport
    inflight: dict[StepKey, Inflight] = field(default_factory=dict)
    dropped: dict[StepKey, Inflight] = field(default_factory=dict)
    """Calls of cancelled executions left running (``cancel_only_heartbeating``); their
    results are discarded, and shutdown and the method timeout still end them."""
    locks: dict[str, dict[str, str]] = field(default_factory=dict)
    """run_id -> attribute key -> holder (``step:<exec_id>`` or ``rpc:<id>``)."""
    hb_dirty: dict[StepKey, bytes | None] = field(default_factory=dict)
    """Heartbeat values received but not yet written to their step row."""
    sticky: dict[str, str] = field(default_factory=dict)
    """run_id -> the Worker that served it last, preferred for its next call."""
    post_commit: list[Callable[[], None]] = field(default_factory=list)
    built: OrderedDict[StepKey, tuple[int, Request]] = field(default_factory=OrderedDict)
    """The request built for a method entry, keyed by step, tagged with its lock_order
    (unique per entry); added once committed, so dispatch need not read it back."""
    order: int = 0
    """Last lock_order / wait_seq handed out: FIFO order without table scans."""
    stopping: threading.Event = field(default_factory=threading.Event)
    pump: Callable[[], None] = _nothing
    """Starts ready method calls; the engine installs dispatch here, which sits above
    every module that commits."""
    step_columns: str = field(init=False)
    step_columns_of_s: str = field(init=False)

    def __post_init__(self) -> None:
        # Every steps column but the snapshot, which can be the size of everything a
        # method loads: reading a step row should not copy it.
        columns = [
            row[1]
            for row in self.db.conn.execute("PRAGMA table_info(steps)").fetchall()
            if row[1] != "snapshot"
        ]
        self.step_columns = ", ".join(columns)
        self.step_columns_of_s = ", ".join(f"s.{column}" for column in columns)

    def next_order(self) -> int:
        self.order += 1
        return self.order

    def transport(self, target: pb.WorkerTarget) -> Transport:
        return self.pull if target.is_pull_mode else self.listening

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One committed state change, then wake waiters and dispatch ready work."""
        with self.db.lock:
            outer = not self.db.in_transaction
            try:
                with self.db.transaction() as conn:
                    yield conn
            except BaseException:
                if outer:
                    self.post_commit.clear()
                raise
            if outer:
                actions, self.post_commit = self.post_commit, []
                self.changed.notify_all()
                for action in actions:
                    action()
                self.pump()

    def flush_heartbeat(self, conn: sqlite3.Connection, key: StepKey) -> None:
        if key in self.hb_dirty:
            conn.execute(
                "UPDATE steps SET hb_value=? WHERE run_id=? AND exec_id=?",
                (self.hb_dirty.pop(key), *key),
            )
