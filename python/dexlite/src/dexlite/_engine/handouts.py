"""Which single-attempt calls may have reached a Worker: what a restart counts as an attempt.

A restart counts every method call it finds in flight as a failed attempt,
because any of them may have run. For a Step with one attempt that costs the
Step itself (its failure route runs), so for those alone dexlite commits a row
here before a Worker can receive the call. A restart that finds the attempt
without its row knows the call never left the queue: it dispatches it again
under the same attempt number instead of failing it. Steps with retries keep
the plain rule; a spent retry is cheap, and one commit per call is not.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from dexlite._storage import StorageError

if TYPE_CHECKING:
    import sqlite3

    from dex.dexpb import dex_pb2 as pb

    from dexlite._model import Method

    from .state import EngineState, StepKey

__all__ = ["forget", "forget_all", "handed_out", "mark_handed_out", "single_attempt"]

_LOGGER = logging.getLogger(__name__)


def single_attempt(options: pb.StepOptions, method: Method) -> bool:
    policy = options.wait_for_retry_policy if method == "wait_for" else options.execute_retry_policy
    return policy.maximum_attempts == 1


def mark_handed_out(state: EngineState, key: StepKey, method: Method, attempt: int) -> bool:
    """Commits that this attempt may reach a Worker; False when the disk refused it.

    Called by the transport right before the Worker can see the call, so the row
    is durable whenever the Worker got it.
    """
    try:
        with state.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO handouts(run_id, exec_id, method, attempt)"
                " VALUES (?,?,?,?)",
                (*key, method, attempt),
            )
    except StorageError as error:
        _LOGGER.warning("not handing out a call until its hand-out can be stored: %s", error)
        return False
    return True


def handed_out(conn: sqlite3.Connection, key: StepKey, method: Method, attempt: int) -> bool:
    row = conn.execute(
        "SELECT 1 FROM handouts WHERE run_id=? AND exec_id=? AND method=? AND attempt=?",
        (*key, method, attempt),
    ).fetchone()
    return row is not None


def forget(conn: sqlite3.Connection, key: StepKey) -> None:
    """The call ended: its outcome is committed with this."""
    conn.execute("DELETE FROM handouts WHERE run_id=? AND exec_id=?", key)


def forget_all(conn: sqlite3.Connection) -> None:
    """After a restart settled every call that was in flight, no row means anything."""
    conn.execute("DELETE FROM handouts")
