"""Waiting conditions, timers and flow timeouts.

``evaluate_waits`` and ``settle`` run inside the caller's transaction;
``fire_due`` is the maintenance pass that opens its own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite import _conditions, _snapshot
from dexlite._model import (
    COMPLETED,
    RUNNING,
    TIMEOUT_HANDLER_ID,
    TIMEOUT_HANDLER_TYPE,
    WAITING,
    handler_step_options,
)

from .cancellation import close_run
from .locks import grant_locks
from .queue import enqueue, enter_method

if TYPE_CHECKING:
    import sqlite3

    from .state import EngineState


def evaluate_waits(state: EngineState, conn: sqlite3.Connection, run_id: str) -> None:
    """Matches WAITING executions, oldest waiter first, and consumes their messages."""
    waiting = conn.execute(
        "SELECT exec_id, condition FROM steps WHERE run_id=? AND state=? ORDER BY wait_seq",
        (run_id, WAITING),
    ).fetchall()
    if not waiting:
        return
    counts = _snapshot.channel_counts(conn, run_id)
    for exec_id, blob in waiting:
        condition = pb.WaitingConditionState()
        condition.ParseFromString(blob)
        fired = {
            idx
            for (idx,) in conn.execute(
                "SELECT idx FROM timers WHERE run_id=? AND exec_id=? AND status<>?",
                (run_id, exec_id, pb.INTERNAL_TIMER_STATUS_PENDING),
            )
        }
        plan = _conditions.plan(condition, counts, fired)
        if plan is None:
            continue
        results = pb.ConditionResults()
        for index, timer in enumerate(condition.timer_conditions):
            results.timer_results.add(
                condition_id=timer.condition_id,
                condition_status=(
                    pb.CONDITION_STATUS_COMPLETED if index in fired else pb.CONDITION_STATUS_WAITING
                ),
            )
        for index, channel in enumerate(condition.channel_conditions):
            entry = results.channel_results.add(
                condition_id=channel.condition_id, channel_name=channel.channel_name
            )
            if index not in plan.channel_takes:
                entry.condition_status = pb.CONDITION_STATUS_WAITING
                continue
            entry.condition_status = pb.CONDITION_STATUS_COMPLETED
            take = plan.channel_takes[index]
            if take <= 0:
                continue
            rows = conn.execute(
                "SELECT seq, value FROM msgs WHERE run_id=? AND channel=? ORDER BY seq LIMIT ?",
                (run_id, channel.channel_name, take),
            ).fetchall()
            for seq, value in rows:
                entry.values.add().ParseFromString(value)
                conn.execute("DELETE FROM msgs WHERE seq=?", (seq,))
            counts[channel.channel_name] = counts.get(channel.channel_name, 0) - len(rows)
        conn.execute("DELETE FROM timers WHERE run_id=? AND exec_id=?", (run_id, exec_id))
        enter_method(state, conn, run_id, exec_id, "execute", cond_results=results)


def fire_due(state: EngineState) -> None:
    """Fires due timers and flow timeouts, flushes heartbeats, starts due retries."""
    now = time.time()
    with state.db.lock:
        conn = state.db.conn
        idle = (
            not state.hb_dirty
            and conn.execute(
                "SELECT 1 FROM timers WHERE status=? AND fire_at<=? LIMIT 1",
                (pb.INTERNAL_TIMER_STATUS_PENDING, now),
            ).fetchone()
            is None
            and conn.execute(
                "SELECT 1 FROM runs WHERE status=? AND timeout_at IS NOT NULL AND timeout_at<=?"
                " LIMIT 1",
                (RUNNING, now),
            ).fetchone()
            is None
        )
        if idle:
            state.pump()  # retries whose backoff has elapsed
            return
    with state.tx() as conn:
        due = conn.execute(
            "SELECT DISTINCT run_id FROM timers WHERE status=? AND fire_at<=?",
            (pb.INTERNAL_TIMER_STATUS_PENDING, now),
        ).fetchall()
        if due:
            conn.execute(
                "UPDATE timers SET status=? WHERE status=? AND fire_at<=?",
                (pb.INTERNAL_TIMER_STATUS_FIRED, pb.INTERNAL_TIMER_STATUS_PENDING, now),
            )
            for (run_id,) in due:
                evaluate_waits(state, conn, run_id)
        for run in conn.execute(
            "SELECT * FROM runs WHERE status=? AND timeout_at IS NOT NULL AND timeout_at<=?",
            (RUNNING, now),
        ).fetchall():
            flow_timeout(state, conn, run)
        for key in list(state.hb_dirty):
            state.flush_heartbeat(conn, key)


def flow_timeout(state: EngineState, conn: sqlite3.Connection, run: sqlite3.Row) -> None:
    """Applies the run's timeout policy once its deadline has passed."""
    run_id = run["run_id"]
    conn.execute("UPDATE runs SET timeout_at=NULL WHERE run_id=?", (run_id,))
    policy = run["timeout_policy"]
    if policy == pb.FLOW_TIMEOUT_POLICY_CANCEL:
        close_run(state, conn, run_id, pb.FLOW_STATUS_CANCELED)
    elif policy == pb.FLOW_TIMEOUT_POLICY_HANDLER:
        handler = pb.FlowTimeoutHandlerOptions()
        if run["handler_options"] is not None:
            handler.ParseFromString(run["handler_options"])
        movement = pb.StepMovement(
            step_type=TIMEOUT_HANDLER_TYPE, step_options=handler_step_options(handler)
        )
        enqueue(state, conn, run_id, movement, "", exec_id=TIMEOUT_HANDLER_ID)
    else:
        close_run(
            state,
            conn,
            run_id,
            pb.FLOW_STATUS_FAILED,
            error_type=pb.FLOW_ERROR_TYPE_FLOW_TIMEOUT,
            message=timeout_message(run),
        )


def timeout_message(run: sqlite3.Row) -> str:
    """The Dex Server's text for a FAIL-policy timeout, naming the configured seconds.

    The run keeps only its start and deadline; the request's whole-second timeout is
    their difference, rounded back from floating point.
    """
    seconds = round(run["timeout_at"] - run["start_ts"])
    return f"Flow timed out after {seconds} seconds"


def settle(state: EngineState, conn: sqlite3.Connection, run_id: str) -> None:
    """Re-evaluates waits and locks, and completes a gracefully finished flow."""
    evaluate_waits(state, conn, run_id)
    grant_locks(state, conn, run_id)
    run = conn.execute("SELECT status, graceful FROM runs WHERE run_id=?", (run_id,)).fetchone()
    if run is not None and run["status"] == RUNNING and run["graceful"]:
        active = conn.execute(
            "SELECT COUNT(*) FROM steps WHERE run_id=? AND state<>? AND exec_id<>?",
            (run_id, COMPLETED, TIMEOUT_HANDLER_ID),
        ).fetchone()[0]
        if active == 0:
            close_run(state, conn, run_id, pb.FLOW_STATUS_COMPLETED)
