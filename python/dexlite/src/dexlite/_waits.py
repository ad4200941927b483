"""Waiting conditions, timers and flow timeouts (spec §3.8, §4.4, §8).

``evaluate_waits`` runs inside the caller's transaction; ``fire_due`` is the
maintenance pass that opens its own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from . import _conditions, _snapshot
from ._model import (
    RUNNING,
    TIMEOUT_HANDLER_ID,
    TIMEOUT_HANDLER_TYPE,
    WAITING,
    handler_step_options,
)

if TYPE_CHECKING:
    import sqlite3

    from ._engine import Engine


def evaluate_waits(engine: Engine, conn: sqlite3.Connection, run_id: str) -> None:
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
        engine.enter_method(conn, run_id, exec_id, "execute", cond_results=results)


def fire_due(engine: Engine) -> None:
    """Fires due timers and flow timeouts, flushes heartbeats, starts due retries."""
    now = time.time()
    with engine.db.lock:
        conn = engine.db.conn
        idle = (
            not engine._hb_dirty
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
            engine._pump()  # retries whose backoff has elapsed
            return
    with engine.tx() as conn:
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
                engine.evaluate_waits(conn, run_id)
        for run in conn.execute(
            "SELECT * FROM runs WHERE status=? AND timeout_at IS NOT NULL AND timeout_at<=?",
            (RUNNING, now),
        ).fetchall():
            flow_timeout(engine, conn, run)
        for key in list(engine._hb_dirty):
            engine._flush_heartbeat(conn, key)


def flow_timeout(engine: Engine, conn: sqlite3.Connection, run: sqlite3.Row) -> None:
    run_id = run["run_id"]
    conn.execute("UPDATE runs SET timeout_at=NULL WHERE run_id=?", (run_id,))
    policy = run["timeout_policy"]
    if policy == pb.FLOW_TIMEOUT_POLICY_CANCEL:
        engine.close_run(conn, run_id, pb.FLOW_STATUS_CANCELED, pb.FLOW_ERROR_TYPE_UNSPECIFIED, "")
    elif policy == pb.FLOW_TIMEOUT_POLICY_HANDLER:
        handler = pb.FlowTimeoutHandlerOptions()
        if run["handler_options"] is not None:
            handler.ParseFromString(run["handler_options"])
        movement = pb.StepMovement(
            step_type=TIMEOUT_HANDLER_TYPE, step_options=handler_step_options(handler)
        )
        engine.enqueue(conn, run_id, movement, "", exec_id=TIMEOUT_HANDLER_ID)
    else:
        engine.close_run(
            conn, run_id, pb.FLOW_STATUS_FAILED, pb.FLOW_ERROR_TYPE_FLOW_TIMEOUT, "flow timeout"
        )
