"""Applying worker results and failures to step executions (spec §4.2, §4.5, §4.6, §4.9, §4.11).

Every function runs inside the caller's transaction; nothing here talks to a Worker.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from . import _conditions, _snapshot
from ._model import (
    WAITFOR_RUNNING,
    WAITING,
    Method,
    check_value,
    is_null,
    null_value,
    retry_delay,
    step_options_problem,
    step_type_problem,
)

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    from ._engine import Engine
    from ._errors import WorkerFailure

_LOGGER = logging.getLogger(__name__)
_TOTAL_DURATION_DEFAULT = 4 * 3600


def apply_wait_for(
    engine: Engine,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    result: pb.InvokeWaitForMethodResponse,
) -> str | None:
    problem = engine.check_writes(
        result.upsert_attributes, result.publish_to_channel, result.delete_from_channel
    )
    if problem is None and result.HasField("waiting_condition"):
        problem = _conditions.validate(result.waiting_condition)
    if problem is not None:
        return problem
    run_id, exec_id = run["run_id"], step["exec_id"]
    engine.apply_writes(
        conn,
        run_id,
        result.upsert_attributes,
        result.publish_to_channel,
        result.delete_from_channel,
    )
    holder = pb.GetAttributesResponse()
    holder.attributes.extend(result.upsert_step_exe_locals)
    conn.execute(
        "UPDATE steps SET locals=? WHERE run_id=? AND exec_id=?",
        (holder.SerializeToString(), run_id, exec_id),
    )
    engine.release_locks(conn, run_id, f"step:{exec_id}")
    movement = engine.movement(step)
    engine.event(
        conn,
        run_id,
        step_wait_for_completed=pb.StepWaitForCompletedEvent(
            context=engine._event_context(step, movement, "wait_for"),
            input=pb.StepMethodEventInput(step_input=movement.step_input),
            output=pb.StepWaitForCompletedOutput(
                wait_for_condition=result.waiting_condition,
                upsert_attributes=result.upsert_attributes,
                publish_to_channel=result.publish_to_channel,
                record_events=result.record_events,
                upsert_step_execution_locals=result.upsert_step_exe_locals,
                delete_from_channel=result.delete_from_channel,
            ),
        ),
    )
    condition = result.waiting_condition
    if result.HasField("waiting_condition") and (
        condition.timer_conditions or condition.channel_conditions
    ):
        now = int(time.time())
        state = _conditions.to_state(condition, now)
        wait_seq = engine._next_order()
        conn.execute(
            "UPDATE steps SET state=?, condition=?, wait_seq=?, snapshot=NULL"
            " WHERE run_id=? AND exec_id=?",
            (WAITING, state.SerializeToString(), wait_seq, run_id, exec_id),
        )
        for index, timer in enumerate(state.timer_conditions):
            conn.execute(
                "INSERT INTO timers(run_id, exec_id, idx, condition_id, fire_at, status)"
                " VALUES (?,?,?,?,?,?)",
                (
                    run_id,
                    exec_id,
                    index,
                    timer.condition_id,
                    timer.firing_unix_timestamp_seconds,
                    pb.INTERNAL_TIMER_STATUS_PENDING,
                ),
            )
    else:
        engine.enter_method(conn, run_id, exec_id, "execute", cond_results=pb.ConditionResults())
    engine.evaluate_waits(conn, run_id)
    engine.grant_locks(conn, run_id)
    return None


def validate_decision(engine: Engine, decision: pb.StepDecision, *, in_rpc: bool) -> str | None:
    close = decision.close_decision if decision.HasField("close_decision") else None
    if close is not None and close.close_decision_type == pb.CLOSE_DECISION_TYPE_UNSPECIFIED:
        return "close_decision_type is required"
    for movement in decision.next_steps:
        problem = step_type_problem(movement.step_type) or step_options_problem(
            movement.step_options, "next_steps.step_options"
        )
        if problem:
            return f"next_steps: {problem}"
        if movement.HasField("step_input"):
            size_problem = check_value(
                movement.step_input, "step_input", engine.options.max_value_bytes
            )
            if size_problem:
                return size_problem
    for name in [*decision.cancel_step_types, *decision.cancel_sibling_step_types]:
        problem = step_type_problem(name)
        if problem:
            return f"cancel lists: {problem}"
    if in_rpc:
        if close is not None:
            return "closing flow in RPC is not supported yet"
        if decision.cancel_sibling_step_types:
            return "cancel_sibling_step_types is not supported in RPCs"
        return None
    if close is None and not decision.next_steps:
        return "the step decision is empty: it needs next_steps or a close_decision"
    if close is None:
        return None
    kind = close.close_decision_type
    if kind == pb.CLOSE_DECISION_TYPE_FORCE_COMPLETE_ON_CHANNELS_EMPTY:
        names = list(close.conditional_channel_names)
        if not decision.next_steps or not names or "" in names or len(set(names)) != len(names):
            return "FORCE_COMPLETE_ON_CHANNELS_EMPTY needs next_steps and unique channel names"
    elif decision.next_steps:
        return "a close decision cannot be combined with next_steps"
    if (
        kind == pb.CLOSE_DECISION_TYPE_FORCE_FAIL
        and close.HasField("close_input")
        and close.close_input.WhichOneof("kind") != "string_value"
    ):
        return "FORCE_FAIL close_input must be a string"
    if kind == pb.CLOSE_DECISION_TYPE_DEAD_END and close.HasField("close_input"):
        return "DEAD_END must not carry close_input"
    return None


def apply_execute(
    engine: Engine,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    result: pb.InvokeExecuteMethodResponse,
) -> str | None:
    problem = engine.check_writes(
        result.upsert_attributes, result.publish_to_channel, result.delete_from_channel
    )
    problem = problem or validate_decision(engine, result.step_decision, in_rpc=False)
    if problem is not None:
        return problem
    run_id, exec_id = run["run_id"], step["exec_id"]
    decision = result.step_decision
    engine.apply_writes(
        conn,
        run_id,
        result.upsert_attributes,
        result.publish_to_channel,
        result.delete_from_channel,
    )
    engine.cancel_types(
        conn,
        run_id,
        list(decision.cancel_step_types),
        list(decision.cancel_sibling_step_types),
        exclude=exec_id,
        siblings_of=step["from_id"],
    )
    movement = engine.movement(step)
    engine._complete_step(conn, run_id, exec_id, "completed")
    # What the snapshot carried: the column it was built from (enter_method alone sets it).
    condition_results = pb.ConditionResults()
    if step["cond_results"] is not None:
        condition_results.ParseFromString(step["cond_results"])
    engine.event(
        conn,
        run_id,
        step_execute_completed=pb.StepExecuteCompletedEvent(
            context=engine._event_context(step, movement, "execute"),
            input=pb.StepMethodEventInput(
                step_input=movement.step_input, condition_results=condition_results
            ),
            output=pb.StepExecuteCompletedOutput(
                step_decision=decision,
                upsert_attributes=result.upsert_attributes,
                publish_to_channel=result.publish_to_channel,
                record_events=result.record_events,
                upsert_step_execution_locals=result.upsert_step_exe_locals,
                delete_from_channel=result.delete_from_channel,
            ),
        ),
    )
    closed = False
    if decision.HasField("close_decision"):
        closed = apply_close(engine, conn, run_id, step, decision)
    else:
        enqueue_next(engine, conn, run_id, exec_id, decision.next_steps)
    if not closed:
        engine.settle(conn, run_id)
    return None


def apply_close(
    engine: Engine,
    conn: sqlite3.Connection,
    run_id: str,
    step: sqlite3.Row,
    decision: pb.StepDecision,
) -> bool:
    close = decision.close_decision
    kind = close.close_decision_type
    output = close.close_input if close.HasField("close_input") else None
    if kind == pb.CLOSE_DECISION_TYPE_FORCE_COMPLETE_ON_CHANNELS_EMPTY:
        counts = _snapshot.channel_counts(conn, run_id)
        if any(counts.get(name, 0) for name in close.conditional_channel_names):
            enqueue_next(engine, conn, run_id, step["exec_id"], decision.next_steps)
            return False
        kind = pb.CLOSE_DECISION_TYPE_FORCE_COMPLETE
    if kind == pb.CLOSE_DECISION_TYPE_DEAD_END:
        return False
    if kind == pb.CLOSE_DECISION_TYPE_FORCE_FAIL:
        reason = output.string_value if output is not None else ""
        engine.close_run(
            conn,
            run_id,
            pb.FLOW_STATUS_FAILED,
            pb.FLOW_ERROR_TYPE_STEP_DECISION_FAILING_FLOW,
            reason,
        )
        return True
    if output is not None and not is_null(output):
        conn.execute(
            "INSERT INTO outputs(run_id, step_type, exec_id, value) VALUES (?,?,?,?)",
            (run_id, step["step_type"], step["exec_id"], output.SerializeToString()),
        )
    if kind == pb.CLOSE_DECISION_TYPE_GRACEFUL_COMPLETE:
        conn.execute("UPDATE runs SET graceful=1 WHERE run_id=?", (run_id,))
        return False
    engine.close_run(conn, run_id, pb.FLOW_STATUS_COMPLETED, pb.FLOW_ERROR_TYPE_UNSPECIFIED, "")
    return True


def enqueue_next(
    engine: Engine,
    conn: sqlite3.Connection,
    run_id: str,
    from_id: str,
    movements: Sequence[pb.StepMovement],
) -> None:
    for movement in movements:
        clean = pb.StepMovement()
        clean.CopyFrom(movement)
        clean.ClearField("recovery_error_internal_only")
        engine.enqueue(conn, run_id, clean, from_id)


def record_failure(
    engine: Engine,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    failure: WorkerFailure,
) -> None:
    """Counts a failed attempt; schedules the retry or routes the final failure."""
    run_id, exec_id = run["run_id"], step["exec_id"]
    method: Method = "wait_for" if step["state"] == WAITFOR_RUNNING else "execute"
    movement = engine.movement(step)
    options = movement.step_options
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
    step = engine.step_row(run_id, exec_id) or step
    recovery = pb.RecoveryErrorInfo(detail=failure.detail, error_type=failure.error_type)
    failed_output = pb.StepMethodFailedOutput(failure=last_failure)
    context = engine._event_context(step, movement, method)
    engine.release_locks(conn, run_id, f"step:{exec_id}")
    error_type = (
        pb.FLOW_ERROR_TYPE_INTERNAL if failure.server_side else pb.FLOW_ERROR_TYPE_WORKER_API_FAIL
    )
    if method == "wait_for":
        engine.event(
            conn,
            run_id,
            step_wait_for_failed=pb.StepWaitForFailedEvent(context=context, output=failed_output),
        )
        if options.wait_for_failure_policy == pb.WAIT_FOR_METHOD_FAILURE_POLICY_PROCEED_ON_FAILURE:
            engine.enter_method(
                conn,
                run_id,
                exec_id,
                "execute",
                cond_results=pb.ConditionResults(wait_for_failed=True),
                method_error=recovery,
            )
            engine.settle(conn, run_id)
            return
        engine.close_run(conn, run_id, pb.FLOW_STATUS_FAILED, error_type, failure.detail)
        return
    engine.event(
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
        engine._complete_step(conn, run_id, exec_id, "failed")
        recovery_movement = pb.StepMovement(
            step_type=target,
            step_options=options.execute_failure_proceed_step_options,
            recovery_error_internal_only=recovery,
        )
        if movement.HasField("step_input"):
            recovery_movement.step_input.CopyFrom(movement.step_input)
        else:
            recovery_movement.step_input.CopyFrom(null_value())
        engine.enqueue(conn, run_id, recovery_movement, exec_id)
        engine.settle(conn, run_id)
        return
    engine.close_run(conn, run_id, pb.FLOW_STATUS_FAILED, error_type, failure.detail)
