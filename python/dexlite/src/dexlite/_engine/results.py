"""Applying a Worker's wait_for and execute results to step executions.

Every function runs inside the caller's transaction; nothing here talks to a Worker.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dex.dexpb import dex_pb2 as pb

from dexlite import _conditions, _snapshot
from dexlite._model import WAITING, check_value, is_null, step_options_problem, step_type_problem

from .cancellation import cancel_types, close_run
from .locks import grant_locks, release_locks
from .queue import complete_step, enqueue_next, enter_method
from .rows import event, event_context, movement
from .waits import evaluate_waits, settle
from .writes import apply_effects, check_effects

if TYPE_CHECKING:
    import sqlite3

    from .state import EngineState


def apply_wait_for(
    state: EngineState,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    result: pb.InvokeWaitForMethodResponse,
) -> str | None:
    problem = check_effects(state, result)
    if problem is None and result.HasField("waiting_condition"):
        problem = _conditions.validate(result.waiting_condition)
    if problem is not None:
        return problem
    run_id, exec_id = run["run_id"], step["exec_id"]
    apply_effects(conn, run_id, result)
    holder = pb.GetAttributesResponse()
    holder.attributes.extend(result.upsert_step_exe_locals)
    conn.execute(
        "UPDATE steps SET locals=? WHERE run_id=? AND exec_id=?",
        (holder.SerializeToString(), run_id, exec_id),
    )
    release_locks(state, conn, run_id, f"step:{exec_id}")
    moved = movement(step)
    event(
        conn,
        run_id,
        step_wait_for_completed=pb.StepWaitForCompletedEvent(
            context=event_context(state, step, moved, "wait_for"),
            input=pb.StepMethodEventInput(step_input=moved.step_input),
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
        waiting = _conditions.to_state(condition, now)
        wait_seq = state.next_order()
        conn.execute(
            "UPDATE steps SET state=?, condition=?, wait_seq=?, snapshot=NULL"
            " WHERE run_id=? AND exec_id=?",
            (WAITING, waiting.SerializeToString(), wait_seq, run_id, exec_id),
        )
        for index, timer in enumerate(waiting.timer_conditions):
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
        enter_method(state, conn, run_id, exec_id, "execute", cond_results=pb.ConditionResults())
    evaluate_waits(state, conn, run_id)
    grant_locks(state, conn, run_id)
    return None


def validate_decision(state: EngineState, decision: pb.StepDecision, *, in_rpc: bool) -> str | None:
    close = decision.close_decision if decision.HasField("close_decision") else None
    if close is not None and close.close_decision_type == pb.CLOSE_DECISION_TYPE_UNSPECIFIED:
        return "close_decision_type is required"
    for next_step in decision.next_steps:
        problem = step_type_problem(next_step.step_type) or step_options_problem(
            next_step.step_options, "next_steps.step_options"
        )
        if problem:
            return f"next_steps: {problem}"
        if next_step.HasField("step_input"):
            size_problem = check_value(
                next_step.step_input, "step_input", state.options.max_value_bytes
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
    state: EngineState,
    conn: sqlite3.Connection,
    run: sqlite3.Row,
    step: sqlite3.Row,
    result: pb.InvokeExecuteMethodResponse,
) -> str | None:
    problem = check_effects(state, result)
    problem = problem or validate_decision(state, result.step_decision, in_rpc=False)
    if problem is not None:
        return problem
    run_id, exec_id = run["run_id"], step["exec_id"]
    decision = result.step_decision
    apply_effects(conn, run_id, result)
    cancel_types(
        state,
        conn,
        run_id,
        list(decision.cancel_step_types),
        list(decision.cancel_sibling_step_types),
        exclude=exec_id,
        siblings_of=step["from_id"],
    )
    moved = movement(step)
    complete_step(state, conn, run_id, exec_id, "completed")
    # What the snapshot carried: the column it was built from (enter_method alone sets it).
    condition_results = pb.ConditionResults()
    if step["cond_results"] is not None:
        condition_results.ParseFromString(step["cond_results"])
    event(
        conn,
        run_id,
        step_execute_completed=pb.StepExecuteCompletedEvent(
            context=event_context(state, step, moved, "execute"),
            input=pb.StepMethodEventInput(
                step_input=moved.step_input, condition_results=condition_results
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
        closed = apply_close(state, conn, run_id, step, decision)
    else:
        enqueue_next(state, conn, run_id, exec_id, decision.next_steps)
    if not closed:
        settle(state, conn, run_id)
    return None


def apply_close(
    state: EngineState,
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
            enqueue_next(state, conn, run_id, step["exec_id"], decision.next_steps)
            return False
        kind = pb.CLOSE_DECISION_TYPE_FORCE_COMPLETE
    if kind == pb.CLOSE_DECISION_TYPE_DEAD_END:
        return False
    if kind == pb.CLOSE_DECISION_TYPE_FORCE_FAIL:
        reason = output.string_value if output is not None else ""
        close_run(
            state,
            conn,
            run_id,
            pb.FLOW_STATUS_FAILED,
            error_type=pb.FLOW_ERROR_TYPE_STEP_DECISION_FAILING_FLOW,
            message=reason,
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
    close_run(state, conn, run_id, pb.FLOW_STATUS_COMPLETED)
    return True
