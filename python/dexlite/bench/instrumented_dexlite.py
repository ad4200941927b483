"""dexlite with its SQLite writer timed, for the throughput benchmark.

Runs ``dexlite serve`` unchanged except that every Database connection is
wrapped: the wrapper counts transactions and statements and times each
``COMMIT``. When the server exits (SIGTERM), the figures are written as JSON to
the file named by ``DEXLITE_BENCH_STATS``, one entry per database file (the
engine's and the streams').

Run: ``python instrumented_dexlite.py serve --listen ... --db ...`` (the
arguments of ``dexlite serve``).
"""

from __future__ import annotations

import atexit
import json
import os
import sqlite3
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_SRC = Path(__file__).resolve().parent.parent / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

from dexlite import _storage  # noqa: E402 - after the sys.path setup above
from dexlite._cli import main  # noqa: E402


class WriterStats:
    """What one database's writer did: transactions, statements, COMMIT times."""

    def __init__(self) -> None:
        self.transactions = 0
        self.statements = 0
        self.commit_seconds: list[float] = []

    def as_json(self) -> dict[str, Any]:
        return {
            "transactions": self.transactions,
            "statements": self.statements,
            "commit_seconds": self.commit_seconds,
        }


class TimedConnection:
    """Delegates to a sqlite3 connection, counting what goes through ``execute``.

    sqlite3.Connection is a C type whose methods cannot be patched, so the
    Database's connection attribute is replaced by this wrapper instead.
    """

    def __init__(self, conn: sqlite3.Connection, stats: WriterStats) -> None:
        self._conn = conn
        self._stats = stats

    def execute(self, sql: str, parameters: Any = ()) -> sqlite3.Cursor:
        stats = self._stats
        if sql == "COMMIT":
            started = time.perf_counter()
            cursor = self._conn.execute(sql)
            stats.commit_seconds.append(time.perf_counter() - started)
            return cursor
        if sql.startswith("BEGIN"):
            stats.transactions += 1
        else:
            stats.statements += 1
        return self._conn.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Any]) -> sqlite3.Cursor:
        self._stats.statements += 1
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


_STATS: dict[str, WriterStats] = {}
_original_init = _storage.Database.__init__


def _timed_init(self: _storage.Database, path: str, *args: Any, **kwargs: Any) -> None:
    _original_init(self, path, *args, **kwargs)
    stats = _STATS.setdefault(os.path.basename(path), WriterStats())
    self.conn = TimedConnection(self.conn, stats)  # type: ignore[assignment]


def _dump() -> None:
    target = os.environ.get("DEXLITE_BENCH_STATS")
    if target:
        figures = {name: stats.as_json() for name, stats in _STATS.items()}
        Path(target).write_text(json.dumps(figures))


if __name__ == "__main__":
    _storage.Database.__init__ = _timed_init  # type: ignore[method-assign]
    atexit.register(_dump)
    sys.exit(main(sys.argv[1:]))
