"""Cancelling step executions and closing runs."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite._model import COMPLETED

from .queue import complete_step
from .rows import event, flow_result

if TYPE_CHECKING:
    import sqlite3

    from .state import EngineState


def cancel_step(state: EngineState, conn: sqlite3.Connection, run_id: str, exec_id: str) -> None:
    """Cancels one non-completed execution; a running call is cancelled once committed.

    Under ``cancel_only_heartbeating`` a call without a heartbeat timeout is left to
    run, as on the Dex Server: it moves to ``state.dropped``, and whatever it returns
    finds the execution COMPLETED and is discarded.
    """
    complete_step(state, conn, run_id, exec_id, "cancelled")
    key = (run_id, exec_id)
    inflight = state.inflight.pop(key, None)
    if inflight is None:
        return
    handle = inflight.handle
    if state.options.cancel_only_heartbeating and handle.heartbeat_timeout <= 0:
        state.dropped[key] = inflight
        return
    state.post_commit.append(lambda: handle.cancel("cancelled"))


def cancel_types(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    global_types: list[str],
    sibling_types: list[str],
    *,
    exclude: str = "",
    siblings_of: str = "",
) -> None:
    """Cancels executions of ``global_types``, and of ``sibling_types`` from ``siblings_of``."""
    sibling_only = set(sibling_types) - set(global_types)
    targets = conn.execute(
        "SELECT exec_id, step_type, from_id FROM steps WHERE run_id=? AND state<>?",
        (run_id, COMPLETED),
    ).fetchall()
    for exec_id, step_type, from_id in targets:
        if exec_id == exclude:
            continue
        if step_type in global_types or (step_type in sibling_only and from_id == siblings_of):
            cancel_step(state, conn, run_id, exec_id)


def close_run(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    status: int,
    *,
    error_type: int = pb.FLOW_ERROR_TYPE_UNSPECIFIED,
    message: str = "",
    history_message: str | None = None,
) -> None:
    """Closes a run: cancels what is active, stores the result, records ``flow_closed``.

    ``message`` is what WaitForFlow reports; ``history_message`` (default: the same)
    is what the history event keeps. They differ for StopFlow TERMINATE and CANCEL,
    whose reason the Dex Server records but does not return as an error.
    """
    for (exec_id,) in conn.execute(
        "SELECT exec_id FROM steps WHERE run_id=? AND state<>?", (run_id, COMPLETED)
    ).fetchall():
        cancel_step(state, conn, run_id, exec_id)
    conn.execute(
        "UPDATE runs SET status=?, error_type=?, error_message=?, close_ts=?, timeout_at=NULL"
        " WHERE run_id=?",
        (status, error_type, message, time.time(), run_id),
    )
    state.locks.pop(run_id, None)
    state.sticky.pop(run_id, None)
    result = flow_result(conn, run_id)
    event(
        conn,
        run_id,
        flow_closed=pb.FlowClosedHistoryEvent(
            flow_status=status,  # type: ignore[arg-type]
            results=result.results,
            error_type=error_type,  # type: ignore[arg-type]
            error_message=message if history_message is None else history_message,
        ),
    )
