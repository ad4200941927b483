"""Reading runs and steps, and appending history events, inside the engine lock."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import grpc
from dex.dexpb import dex_pb2 as pb

from dexlite import _errors
from dexlite._model import RUNNING, WAITFOR_RUNNING

if TYPE_CHECKING:
    import sqlite3

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

    from dexlite._model import Method

    from .state import EngineState


def run_row(state: EngineState, run_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = state.db.conn.execute(
        "SELECT * FROM runs WHERE run_id=?", (run_id,)
    ).fetchone()
    if row is None:
        raise _errors.ServiceError(grpc.StatusCode.INTERNAL, f"run {run_id!r} vanished")
    return row


def find_run(state: EngineState, flow_id: str, run_id: str = "") -> sqlite3.Row | None:
    """The named run of the flow, or its latest run when ``run_id`` is empty."""
    if run_id:
        row: sqlite3.Row | None = state.db.conn.execute(
            "SELECT * FROM runs WHERE run_id=? AND flow_id=?", (run_id, flow_id)
        ).fetchone()
        return row
    row = state.db.conn.execute(
        "SELECT * FROM runs WHERE flow_id=? ORDER BY seq DESC LIMIT 1", (flow_id,)
    ).fetchone()
    return row


def existing_run(state: EngineState, flow_id: str, run_id: str = "") -> sqlite3.Row:
    row = find_run(state, flow_id, run_id)
    if row is None:
        raise _errors.flow_not_found(flow_id)
    return row


def running_run(state: EngineState, flow_id: str, run_id: str = "") -> sqlite3.Row:
    row = find_run(state, flow_id, run_id)
    if row is None or row["status"] != RUNNING:
        raise _errors.flow_not_found(flow_id)
    return row


def config(run: sqlite3.Row) -> pb.FlowConfig:
    parsed = pb.FlowConfig()
    parsed.ParseFromString(run["config"])
    return parsed


def step_row(state: EngineState, run_id: str, exec_id: str) -> sqlite3.Row | None:
    """The step's columns, without its snapshot."""
    row: sqlite3.Row | None = state.db.conn.execute(
        f"SELECT {state.step_columns} FROM steps WHERE run_id=? AND exec_id=?",
        (run_id, exec_id),
    ).fetchone()
    return row


def movement(step: sqlite3.Row) -> pb.StepMovement:
    parsed = pb.StepMovement()
    parsed.ParseFromString(step["movement"])
    return parsed


def flow_result(conn: sqlite3.Connection, run_id: str) -> pb.FlowResult:
    """What WaitForFlow answers for a closed run.

    Like the Dex Server, a CANCELED or TERMINATED run reports neither results nor
    an error message (a StopFlow reason is history only); this also holds for rows
    an older dexlite wrote with the reason as the message.
    """
    run = conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
    if run["status"] in (pb.FLOW_STATUS_CANCELED, pb.FLOW_STATUS_TERMINATED):
        return pb.FlowResult(flow_status=run["status"], error_type=run["error_type"])
    result = pb.FlowResult(
        flow_status=run["status"],
        error_type=run["error_type"],
        error_message=run["error_message"],
    )
    for step_type, exec_id, blob in conn.execute(
        "SELECT step_type, exec_id, value FROM outputs WHERE run_id=? ORDER BY seq", (run_id,)
    ):
        output = result.results.add(
            completed_step_type=step_type, completed_step_execution_id=exec_id
        )
        output.completed_step_output.ParseFromString(blob)
    return result


def event(conn: sqlite3.Connection, run_id: str, **payload: Message) -> None:
    """Appends one history event in the current transaction (dense IDs from 1)."""
    # RETURNING saves a second statement per event; fetchall() steps the statement to
    # completion so nothing is left in progress at COMMIT.
    event_id = conn.execute(
        "UPDATE runs SET event_seq=event_seq+1 WHERE run_id=? RETURNING event_seq", (run_id,)
    ).fetchall()[0][0]
    appended = pb.FlowHistoryEvent(event_id=event_id, run_attempt=1)
    for name, message in payload.items():
        getattr(appended, name).CopyFrom(message)
    appended.event_time.GetCurrentTime()
    conn.execute(
        "INSERT INTO history(run_id, event_id, payload) VALUES (?,?,?)",
        (run_id, event_id, appended.SerializeToString()),
    )


def event_context(
    state: EngineState, step: sqlite3.Row, moved: pb.StepMovement, method: Method
) -> pb.StepMethodEventContext:
    """The context a step method's history event carries."""
    options = moved.step_options
    wait_for = method == "wait_for"
    context = pb.StepMethodEventContext(
        step_execution_id=step["exec_id"],
        from_step_execution_id=step["from_id"],
        step_type=step["step_type"],
        durability=(
            options.wait_for_durability_override
            if wait_for
            else options.execute_durability_override
        ),
        final_attempt=step["attempt"],
        method_options=pb.StepMethodOptions(
            timeout_seconds=method_timeout(state, options, method),
            retry_policy=(
                options.wait_for_retry_policy if wait_for else options.execute_retry_policy
            ),
            heartbeat_timeout_seconds=options.heartbeat_timeout_seconds,
        ),
    )
    context.started_time.FromNanoseconds(int(step["method_started_ts"] * 1e9))
    context.duration.FromNanoseconds(int(max(0.0, time.time() - step["method_started_ts"]) * 1e9))
    if step["last_failure"] is not None:
        context.last_failure_info.ParseFromString(step["last_failure"])
    return context


def method_of(step: sqlite3.Row) -> Method:
    """Which method a running step is in, from its state column."""
    return "wait_for" if step["state"] == WAITFOR_RUNNING else "execute"


def method_timeout(state: EngineState, options: pb.StepOptions, method: Method) -> int:
    timeout = (
        options.wait_for_timeout_seconds
        if method == "wait_for"
        else options.execute_timeout_seconds
    )
    return timeout or state.options.default_method_timeout_seconds
