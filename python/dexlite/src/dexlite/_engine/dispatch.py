"""Starting ready method calls on Workers and committing what each call returns.

A call runs on the engine's thread pool outside the engine lock; its outcome
re-enters the lock in one transaction. Liveness (start-to-close and heartbeat
timeouts) is checked from the maintenance thread.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import grpc
from dex.dexpb import dex_pb2 as pb

from dexlite._calls import CallHandle, CallSpec, Outcome, cancelled_failure
from dexlite._errors import WorkerFailure
from dexlite._model import EXECUTE_RUNNING, RUNNING, RUNNING_STATES, WAITFOR_RUNNING
from dexlite._storage import StorageError

from . import handouts
from .failures import record_failure
from .requests import snapshot_request
from .results import apply_execute, apply_wait_for
from .rows import method_of, method_timeout, movement, run_row, step_row
from .state import Inflight

if TYPE_CHECKING:
    import sqlite3

    from google.protobuf.message import Message  # type: ignore[import-untyped,unused-ignore]

    from .state import EngineState, StepKey

_LOGGER = logging.getLogger(__name__)
# Below the SDK's 4 MiB gRPC receive limit, with room for framing.
_MAX_REQUEST_BYTES = 3_500_000
_COMMIT_RETRY_FIRST = 0.05
_COMMIT_RETRY_MAX = 2.0


class Dispatcher:
    """Owns the call pool; ``pump`` is what the state runs after every commit."""

    def __init__(self, state: EngineState) -> None:
        self._state = state
        self._pool = ThreadPoolExecutor(max_workers=256, thread_name_prefix="dexlite-call")

    def pump(self) -> None:
        """Starts every method call that is ready, due and not already in flight."""
        state = self._state
        if state.stopping.is_set():
            return
        rows = state.db.conn.execute(
            f"SELECT {state.step_columns_of_s}, r.flow_type AS flow_type, r.flow_id AS flow_id,"
            " r.config AS config FROM steps s JOIN runs r ON r.run_id=s.run_id"
            " WHERE s.state IN (?,?) AND s.snapshot IS NOT NULL AND s.next_due<=?"
            " AND r.status=?",
            (*RUNNING_STATES, time.time(), RUNNING),
        ).fetchall()
        for step in rows:
            if (step["run_id"], step["exec_id"]) not in state.inflight:
                self._dispatch(step)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _dispatch(self, step: sqlite3.Row) -> None:
        state = self._state
        method = method_of(step)
        moved = movement(step)
        options = moved.step_options
        request = snapshot_request(state, step, method)
        request.context.attempt = step["attempt"]
        request.context.ClearField("last_heartbeat_value")
        key = (step["run_id"], step["exec_id"])
        hb = (
            state.hb_dirty.get(key, step["hb_value"]) if key in state.hb_dirty else step["hb_value"]
        )
        if hb is not None and step["attempt"] > 1:
            request.context.last_heartbeat_value.ParseFromString(hb)
        timeout = method_timeout(state, options, method)
        config = pb.FlowConfig()
        config.ParseFromString(step["config"])
        handle = CallHandle(
            deadline=time.monotonic() + timeout,
            heartbeat_timeout=float(
                options.heartbeat_timeout_seconds or state.options.default_heartbeat_timeout_seconds
            ),
        )
        inflight = Inflight(method, step["attempt"], handle, step["flow_type"], step["flow_id"])
        state.inflight[key] = inflight
        source = f"#{step['exec_id']}"

        def on_frame(frame: Message) -> None:
            _on_frame(state, key, inflight, source, frame)

        run_id = step["run_id"]
        attempt = step["attempt"]

        def on_hand_out() -> bool:
            return handouts.mark_handed_out(state, key, method, attempt)

        spec = CallSpec(
            kind=method,
            request=request,
            target=config.worker_target,
            flow_type=step["flow_type"],
            name=moved.step_type,
            timeout=float(timeout),
            on_frame=on_frame,
            sticky_worker=state.sticky.get(run_id, ""),
            on_served_by=lambda worker: state.sticky.__setitem__(run_id, worker),
            on_hand_out=on_hand_out if handouts.single_attempt(options, method) else None,
        )
        self._pool.submit(_call, state, key, inflight, spec)


def _call(state: EngineState, key: StepKey, inflight: Inflight, spec: CallSpec) -> None:
    size = spec.request.ByteSize()
    if size > _MAX_REQUEST_BYTES:
        # The SDK's 4 MiB receive limit would reject it; fail the attempt clearly.
        outcome = Outcome(
            failure=WorkerFailure(
                f"value too large: {spec.kind} request {size} bytes > {_MAX_REQUEST_BYTES}",
                "ValueTooLarge",
                grpc.StatusCode.RESOURCE_EXHAUSTED.value[0],
                server_side=True,
            )
        )
    else:
        outcome = _invoke(state, spec, inflight)
    if state.stopping.is_set():
        return  # shutting down: the restart counts this attempt as interrupted
    try:
        _commit_outcome(state, key, inflight, outcome)
    except Exception:
        _LOGGER.exception("applying a worker outcome failed")
        with state.db.lock:
            if state.inflight.get(key) is inflight:
                del state.inflight[key]
            if state.dropped.get(key) is inflight:
                del state.dropped[key]


def _commit_outcome(state: EngineState, key: StepKey, inflight: Inflight, outcome: Outcome) -> None:
    """Commits the outcome, trying again while the disk refuses the write.

    The call stays in flight meanwhile, so no pump dispatches the attempt a
    second time: the Worker ran it once and its result is still here. A stop
    ends the wait; the restart then counts the attempt as interrupted.
    """
    delay = _COMMIT_RETRY_FIRST
    while True:
        with state.db.lock:
            was_inflight = state.inflight.get(key) is inflight
            was_dropped = state.dropped.get(key) is inflight
            had_beat, beat = key in state.hb_dirty, state.hb_dirty.get(key)
            try:
                with state.tx() as conn:
                    _finish_call(state, conn, key, inflight, outcome)
                return
            except StorageError as error:
                # Rolled back: put back what _finish_call took out of the engine's maps.
                if was_inflight:
                    state.inflight[key] = inflight
                if was_dropped:
                    state.dropped[key] = inflight
                if had_beat and key not in state.hb_dirty:
                    state.hb_dirty[key] = beat
                _LOGGER.warning("keeping a worker outcome until it can be stored: %s", error)
        if state.stopping.wait(delay):  # backoff while the disk is full, not a synchronisation
            with state.db.lock:
                if state.inflight.get(key) is inflight:
                    del state.inflight[key]
            return
        delay = min(delay * 2, _COMMIT_RETRY_MAX)


def _invoke(state: EngineState, spec: CallSpec, inflight: Inflight) -> Outcome:
    try:
        outcome = state.transport(spec.target).invoke(spec, inflight.handle)
    except Exception as error:  # a transport bug fails the attempt, not the server
        _LOGGER.exception("worker call failed")
        outcome = Outcome(
            failure=WorkerFailure(
                f"dexlite transport error: {error}", "INTERNAL", 13, server_side=True
            )
        )
    return outcome


def _on_frame(
    state: EngineState, key: StepKey, inflight: Inflight, source: str, frame: Message
) -> None:
    assert isinstance(frame, pb.InvokeWaitForMethodOutput | pb.InvokeExecuteMethodOutput)
    kind = frame.WhichOneof("output")
    if kind == "heartbeat":
        with state.db.lock:
            if state.inflight.get(key) is inflight:
                beat = frame.heartbeat
                state.hb_dirty[key] = (
                    beat.value.SerializeToString() if beat.HasField("value") else None
                )
    elif kind == "stream_write":
        write = frame.stream_write
        state.streams.append(
            flow_type=inflight.flow_type,
            flow_id=inflight.flow_id,
            name=write.stream_name,
            capacity=write.stream_capacity_bytes,
            value=write.value,
            source=source,
        )


def _finish_call(
    state: EngineState,
    conn: sqlite3.Connection,
    key: StepKey,
    inflight: Inflight,
    outcome: Outcome,
) -> None:
    """Commits the call's result, or its failure; a call the engine gave up on counts not."""
    if state.inflight.get(key) is inflight:
        del state.inflight[key]
    handouts.forget(conn, key)
    if state.dropped.get(key) is inflight:
        del state.dropped[key]
        return  # its execution was cancelled while it ran: the result is discarded
    if inflight.handle.reason in ("cancelled", "shutdown"):
        return
    if inflight.handle.reason is not None:  # timed out: a late result does not count
        outcome = Outcome(failure=cancelled_failure(inflight.handle))
    step = step_row(state, *key)
    expected = WAITFOR_RUNNING if inflight.method == "wait_for" else EXECUTE_RUNNING
    if step is None or step["state"] != expected or step["attempt"] != inflight.attempt:
        return
    run = run_row(state, key[0])
    if run["status"] != RUNNING:
        return
    state.flush_heartbeat(conn, key)
    if outcome.result is not None:
        if inflight.method == "wait_for":
            assert isinstance(outcome.result, pb.InvokeWaitForMethodResponse)
            problem = apply_wait_for(state, conn, run, step, outcome.result)
        else:
            assert isinstance(outcome.result, pb.InvokeExecuteMethodResponse)
            problem = apply_execute(state, conn, run, step, outcome.result)
        if problem is None:
            return
        outcome = Outcome(
            failure=WorkerFailure(
                f"invalid worker result: {problem}", "InvalidResult", 3, server_side=True
            )
        )
    assert outcome.failure is not None
    record_failure(state, conn, run, step, outcome.failure)


def check_liveness(state: EngineState) -> None:
    """Cancels calls past their start-to-close deadline or silent past their heartbeat.

    A call no Worker holds yet waits in the queue: that is not an attempt, so
    neither timeout runs for it.
    """
    now = time.monotonic()
    with state.db.lock:
        inflight = [*state.inflight.values(), *state.dropped.values()]
    for call in inflight:
        handle = call.handle
        if not handle.held:
            continue
        if now >= handle.deadline:
            handle.cancel("StartToClose")
        elif handle.heartbeat_timeout > 0 and now - handle.last_frame > handle.heartbeat_timeout:
            handle.cancel("Heartbeat")
