"""A step execution's life in the steps table: created, entering a method, completed."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite._model import COMPLETED, EXECUTE_RUNNING, WAITFOR_RUNNING

from .locks import grant_locks, release_locks

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from dexlite._model import Method

    from .state import EngineState


def enqueue(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    movement: pb.StepMovement,
    from_id: str,
    *,
    not_before: float = 0.0,
    exec_id: str = "",
) -> str:
    """Creates one execution; its ID is assigned now, in queue order."""
    step_type = movement.step_type
    if not exec_id:
        n = conn.execute(
            "INSERT INTO counters(run_id, step_type, n) VALUES (?,?,1)"
            " ON CONFLICT(run_id, step_type) DO UPDATE SET n=n+1 RETURNING n",
            (run_id, step_type),
        ).fetchall()[0][0]
        exec_id = f"{step_type}-{n}"
    stored = pb.StepMovement()
    stored.CopyFrom(movement)
    stored.from_step_execution_id_internal_only = from_id
    conn.execute(
        "INSERT INTO steps(run_id, exec_id, step_type, from_id, state, movement)"
        " VALUES (?,?,?,?,?,?)",
        (run_id, exec_id, step_type, from_id, WAITFOR_RUNNING, stored.SerializeToString()),
    )
    method: Method = "execute" if movement.step_options.skip_wait_for else "wait_for"
    enter_method(state, conn, run_id, exec_id, method, not_before=not_before)
    return exec_id


def enqueue_next(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    from_id: str,
    movements: Sequence[pb.StepMovement],
) -> None:
    """Enqueues a decision's next steps; the server-only recovery field never passes."""
    for movement in movements:
        clean = pb.StepMovement()
        clean.CopyFrom(movement)
        clean.ClearField("recovery_error_internal_only")
        enqueue(state, conn, run_id, clean, from_id)


def enter_method(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    exec_id: str,
    method: Method,
    *,
    not_before: float = 0.0,
    cond_results: pb.ConditionResults | None = None,
    method_error: pb.RecoveryErrorInfo | None = None,
) -> None:
    """Starts the method's first attempt; it runs once it gets its locks."""
    now = time.time()
    conn.execute(
        "UPDATE steps SET state=?, attempt=1, first_attempt_ts=?, method_started_ts=?,"
        " next_due=?, lock_order=?, locks_held=0, snapshot=NULL, hb_value=NULL,"
        " cond_results=COALESCE(?, cond_results), method_error=COALESCE(?, method_error),"
        " last_failure=NULL, condition=NULL WHERE run_id=? AND exec_id=?",
        (
            WAITFOR_RUNNING if method == "wait_for" else EXECUTE_RUNNING,
            now,
            now,
            max(now, not_before),
            state.next_order(),
            cond_results.SerializeToString() if cond_results is not None else None,
            method_error.SerializeToString() if method_error is not None else None,
            run_id,
            exec_id,
        ),
    )
    state.hb_dirty.pop((run_id, exec_id), None)
    grant_locks(state, conn, run_id)


def complete_step(
    state: EngineState, conn: sqlite3.Connection, run_id: str, exec_id: str, outcome: str
) -> None:
    conn.execute(
        "UPDATE steps SET state=?, outcome=?, snapshot=NULL, condition=NULL"
        " WHERE run_id=? AND exec_id=?",
        (COMPLETED, outcome, run_id, exec_id),
    )
    conn.execute("DELETE FROM timers WHERE run_id=? AND exec_id=?", (run_id, exec_id))
    release_locks(state, conn, run_id, f"step:{exec_id}")
    state.hb_dirty.pop((run_id, exec_id), None)
    state.built.pop((run_id, exec_id), None)
