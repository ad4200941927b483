"""What a restart makes of the work a stopped or killed server left behind."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dexlite._errors import WorkerFailure
from dexlite._model import RUNNING, RUNNING_STATES

from . import handouts
from .failures import record_failure
from .locks import rebuild_locks
from .rows import method_of, movement, run_row, step_row
from .waits import settle

if TYPE_CHECKING:
    import sqlite3

    from .state import EngineState


def recover(state: EngineState, conn: sqlite3.Connection) -> None:
    """Rebuilds locks and counts every interrupted method call as a failed attempt.

    A single-attempt call without its hand-out row never left the queue: it is
    dispatched again under the same attempt number (`handouts`).
    """
    state.order = int(
        conn.execute(
            "SELECT MAX(COALESCE(MAX(lock_order), 0), COALESCE(MAX(wait_seq), 0)) FROM steps"
        ).fetchone()[0]
    )
    rebuild_locks(state, conn)
    interrupted = conn.execute(
        "SELECT s.run_id, s.exec_id FROM steps s JOIN runs r ON r.run_id=s.run_id"
        " WHERE s.state IN (?,?) AND s.snapshot IS NOT NULL AND r.status=?",
        (*RUNNING_STATES, RUNNING),
    ).fetchall()
    for run_id, exec_id in interrupted:
        step = step_row(state, run_id, exec_id)
        run = run_row(state, run_id)
        if step is None or run["status"] != RUNNING or step["state"] not in RUNNING_STATES:
            continue
        if step["next_due"] > time.time():
            continue  # a retry was already scheduled; nothing was in flight
        method = method_of(step)
        if handouts.single_attempt(movement(step).step_options, method) and not (
            handouts.handed_out(conn, (run_id, exec_id), method, step["attempt"])
        ):
            continue  # queued, never sent to a Worker: not an attempt
        record_failure(
            state,
            conn,
            run,
            step,
            WorkerFailure("server restarted during the call", "ServerRestart", 14),
        )
    handouts.forget_all(conn)
    for (run_id,) in conn.execute("SELECT run_id FROM runs WHERE status=?", (RUNNING,)).fetchall():
        settle(state, conn, run_id)
