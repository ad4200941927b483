"""Attribute locks: granted to waiting methods in FIFO order, held in memory, mirrored in
``locks_held`` so a restart can rebuild them."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from dexlite._model import RUNNING_STATES

from . import requests
from .rows import method_of, movement

if TYPE_CHECKING:
    import sqlite3

    from dex.dexpb import dex_pb2 as pb

    from dexlite._model import Method

    from .state import EngineState


def lock_keys(moved: pb.StepMovement, method: Method) -> list[str]:
    options = moved.step_options
    keys = (
        options.wait_for_lock_attribute_keys
        if method == "wait_for"
        else options.execute_lock_attribute_keys
    )
    return sorted(set(keys))


def grant_locks(state: EngineState, conn: sqlite3.Connection, run_id: str) -> None:
    """Gives locks to waiting methods in FIFO order, then snapshots their state."""
    held = state.locks.setdefault(run_id, {})
    blocked: set[str] = set()
    rows = conn.execute(
        "SELECT * FROM steps WHERE run_id=? AND state IN (?,?) AND snapshot IS NULL"
        " ORDER BY lock_order",
        (run_id, *RUNNING_STATES),
    ).fetchall()
    for step in rows:
        method = method_of(step)
        moved = movement(step)
        keys = lock_keys(moved, method)
        if any(k in held or k in blocked for k in keys):
            blocked.update(keys)
            continue
        for key in keys:
            held[key] = f"step:{step['exec_id']}"
        request = requests.build_request(conn, step, moved, method)
        conn.execute(
            "UPDATE steps SET locks_held=?, snapshot=? WHERE run_id=? AND exec_id=?",
            (1 if keys else 0, request.SerializeToString(), run_id, step["exec_id"]),
        )
        state.post_commit.append(
            functools.partial(
                requests.remember,
                state,
                (run_id, step["exec_id"]),
                (step["lock_order"], request),
            )
        )


def release_locks(state: EngineState, conn: sqlite3.Connection, run_id: str, holder: str) -> None:
    held = state.locks.get(run_id, {})
    for key in [k for k, h in held.items() if h == holder]:
        del held[key]
    if holder.startswith("step:"):
        conn.execute(
            "UPDATE steps SET locks_held=0 WHERE run_id=? AND exec_id=?",
            (run_id, holder[len("step:") :]),
        )


def rebuild_locks(state: EngineState, conn: sqlite3.Connection) -> None:
    """After a restart: the locks that running methods held, from their rows."""
    for step in conn.execute(
        f"SELECT {state.step_columns} FROM steps WHERE locks_held=1 AND state IN (?,?)"
        " ORDER BY lock_order",
        RUNNING_STATES,
    ).fetchall():
        for key in lock_keys(movement(step), method_of(step)):
            state.locks.setdefault(step["run_id"], {})[key] = f"step:{step['exec_id']}"
