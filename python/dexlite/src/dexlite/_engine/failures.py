"""A failed method attempt: the retry it schedules, or where its final failure leads."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite._model import null_value, retry_delay

from .cancellation import close_run
from .locks import release_locks
from .queue import complete_step, enqueue, enter_method
from .rows import event, event_context, method_of, movement, step_row
from .waits import settle

if TYPE_CHECKING:
    import sqlite3

    from dexlite._errors import WorkerFailure

    from .state import EngineState

_LOGGER = logging.getLogger(__name__)
_TOTAL_DURATION_DEFAULT = 4 * 3600


def record_failure(
    state: EngineState,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    failure: WorkerFailure,
) -> None:
    """Counts a failed attempt; schedules the retry or routes the final failure."""
    run_id, exec_id = run["run_id"], step["exec_id"]
    method = method_of(step)
    moved = movement(step)
    options = moved.step_options
    attempt = step["attempt"]
    details = pb.ServiceErrorResponse(
        detail=failure.detail if failure.server_side else "",
        sub_status=pb.ERROR_SUB_STATUS_WORKER_API_ERROR,
        original_worker_error_detail="" if failure.server_side else failure.detail,
        original_worker_error_type=failure.error_type,
        original_worker_error_status=failure.grpc_code,
        original_worker_error_stack_trace=failure.stack_trace,
    )
    last_failure = pb.StepMethodFailure(
        backend_error=failure.detail, details=details, attempt=attempt
    )
    policy = options.wait_for_retry_policy if method == "wait_for" else options.execute_retry_policy
    delay = (
        float(failure.retry_after_seconds)
        if failure.retry_after_seconds > 0
        else retry_delay(policy, attempt)
    )
    total = policy.total_duration_seconds or _TOTAL_DURATION_DEFAULT
    elapsed = time.time() - step["first_attempt_ts"]
    exhausted = (policy.maximum_attempts > 0 and attempt >= policy.maximum_attempts) or (
        elapsed + delay >= total
    )
    conn.execute(
        "UPDATE steps SET last_failure=? WHERE run_id=? AND exec_id=?",
        (last_failure.SerializeToString(), run_id, exec_id),
    )
    _LOGGER.info(
        "step %s/%s %s attempt %d failed (%s: %s)%s",
        run["flow_id"],
        exec_id,
        method,
        attempt,
        failure.error_type,
        failure.detail,
        " - giving up" if exhausted else f" - retry in {delay:.1f}s",
    )
    if not exhausted:
        conn.execute(
            "UPDATE steps SET attempt=?, next_due=? WHERE run_id=? AND exec_id=?",
            (attempt + 1, time.time() + delay, run_id, exec_id),
        )
        return
    step = step_row(state, run_id, exec_id) or step
    recovery = pb.RecoveryErrorInfo(detail=failure.detail, error_type=failure.error_type)
    failed_output = pb.StepMethodFailedOutput(failure=last_failure)
    context = event_context(state, step, moved, method)
    release_locks(state, conn, run_id, f"step:{exec_id}")
    error_type = (
        pb.FLOW_ERROR_TYPE_INTERNAL if failure.server_side else pb.FLOW_ERROR_TYPE_WORKER_API_FAIL
    )
    if method == "wait_for":
        event(
            conn,
            run_id,
            step_wait_for_failed=pb.StepWaitForFailedEvent(context=context, output=failed_output),
        )
        if options.wait_for_failure_policy == pb.WAIT_FOR_METHOD_FAILURE_POLICY_PROCEED_ON_FAILURE:
            enter_method(
                state,
                conn,
                run_id,
                exec_id,
                "execute",
                cond_results=pb.ConditionResults(wait_for_failed=True),
                method_error=recovery,
            )
            settle(state, conn, run_id)
            return
        close_run(
            state,
            conn,
            run_id,
            pb.FLOW_STATUS_FAILED,
            error_type=error_type,
            message=failure.detail,
        )
        return
    event(
        conn,
        run_id,
        step_execute_failed=pb.StepExecuteFailedEvent(context=context, output=failed_output),
    )
    target = options.execute_failure_proceed_step_type
    if (
        options.execute_failure_policy
        == pb.EXECUTE_METHOD_FAILURE_POLICY_PROCEED_TO_CONFIGURED_STEP
        and target
    ):
        complete_step(state, conn, run_id, exec_id, "failed")
        recovery_movement = pb.StepMovement(
            step_type=target,
            step_options=options.execute_failure_proceed_step_options,
            recovery_error_internal_only=recovery,
        )
        if moved.HasField("step_input"):
            recovery_movement.step_input.CopyFrom(moved.step_input)
        else:
            recovery_movement.step_input.CopyFrom(null_value())
        enqueue(state, conn, run_id, recovery_movement, exec_id)
        settle(state, conn, run_id)
        return
    close_run(
        state, conn, run_id, pb.FLOW_STATUS_FAILED, error_type=error_type, message=failure.detail
    )


def _fail_run(
    state: EngineState,
    conn: sqlite3.Connection,
    run_id: str,
    error_type: int,
    failure: WorkerFailure,
) -> None:
    close_run(
        state, conn, run_id, pb.FLOW_STATUS_FAILED, error_type=error_type, message=failure.detail
    )
