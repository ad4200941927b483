"""Building a method's request when it gets its locks, and keeping recent ones in memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite import _snapshot
from dexlite._model import null_value

if TYPE_CHECKING:
    import sqlite3

    from dexlite._model import Method

    from .state import EngineState, Request, StepKey

_BUILT_REQUESTS = 1024
"""Built method requests kept in memory, so dispatch neither reads nor parses them back."""


def _empty_request(method: Method) -> Request:
    return (
        pb.InvokeWaitForMethodRequest() if method == "wait_for" else pb.InvokeExecuteMethodRequest()
    )


def build_request(
    conn: sqlite3.Connection, step: sqlite3.Row, movement: pb.StepMovement, method: Method
) -> Request:
    """The request with the snapshot of everything the method loads, as of now."""
    # Only the run's immutable identity is needed; skipping the config blob and the
    # other columns makes this per-dispatch read cheaper.
    run = conn.execute(
        "SELECT run_id, flow_id, flow_type, start_ts FROM runs WHERE run_id=?",
        (step["run_id"],),
    ).fetchone()
    request = _empty_request(method)
    context = request.context
    context.flow_id = run["flow_id"]
    context.run_id = run["run_id"]
    context.flow_started_timestamp = int(run["start_ts"])
    context.step_execution_id = step["exec_id"]
    context.from_step_execution_id = step["from_id"]
    context.first_attempt_timestamp = int(step["first_attempt_ts"])
    context.run_attempt = 1
    if movement.HasField("recovery_error_internal_only"):
        context.recovery_error.CopyFrom(movement.recovery_error_internal_only)
    elif method == "execute" and step["method_error"] is not None:
        context.recovery_error.ParseFromString(step["method_error"])
    request.flow_type = run["flow_type"]
    request.step_type = movement.step_type
    if movement.HasField("step_input"):
        request.step_input.CopyFrom(movement.step_input)
    elif method == "wait_for":
        request.step_input.CopyFrom(null_value())
    _snapshot.fill(
        conn, run["run_id"], _snapshot.method_loads(movement.step_options, method), request
    )
    if isinstance(request, pb.InvokeExecuteMethodRequest):
        if step["locals"] is not None:
            holder = pb.GetAttributesResponse()
            holder.ParseFromString(step["locals"])
            request.step_exe_locals.extend(holder.attributes)
        if step["cond_results"] is not None:
            request.condition_results.ParseFromString(step["cond_results"])
    return request


def remember(state: EngineState, key: StepKey, built: tuple[int, Request]) -> None:
    state.built[key] = built
    state.built.move_to_end(key)
    while len(state.built) > _BUILT_REQUESTS:
        state.built.popitem(last=False)


def snapshot_request(state: EngineState, step: sqlite3.Row, method: Method) -> Request:
    """The request built for this method entry: from memory, else from its row."""
    key = (step["run_id"], step["exec_id"])
    built = state.built.get(key)
    if built is not None and built[0] == step["lock_order"]:
        return built[1]  # dispatch rewrites only attempt and last_heartbeat_value
    request = _empty_request(method)
    blob = state.db.conn.execute(
        "SELECT snapshot FROM steps WHERE run_id=? AND exec_id=?", key
    ).fetchone()[0]
    request.ParseFromString(blob)
    remember(state, key, (step["lock_order"], request))
    return request
