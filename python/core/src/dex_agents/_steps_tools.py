"""Tool call Steps: AwaitToolApproval, CallTool, CallSingleAttemptTool and their failure routes.

Each tool call is its own Step whose input is the tool call ID, so parallel
calls and their failure routes never share a "current call".
"""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from dex import AsyncContext, Context, Step, StepDecision, StepOptions, Timer, Wait, dead_end, go_to
from dex_agents_contracts import (
    AgentToolCall,
    InterruptKind,
    InterruptResolvedPayload,
    ToolCallStartedPayload,
    ToolCallStatus,
    ToolEffect,
)

from dex_agents._runtime import SessionRuntime, ceil_seconds, is_value_too_large_run_state, utc_from
from dex_agents._step_options import (
    LOAD_TOOL_CALLS,
    LOCK_INTERRUPTS,
    SINGLE_ATTEMPT,
    TOOL_RETRY,
    sync_options,
)
from dex_agents._time import utc_now
from dex_agents.results import APPROVAL_DEADLINE_PASSED, TOOL_CALL_NOT_RUN_ERROR_PREFIX, is_final
from dex_agents.runner import (
    DeferredToolExecution,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskPoller,
    ToolTaskStarted,
)

__all__ = [
    "AwaitToolApproval",
    "CallSingleAttemptTool",
    "CallTool",
    "RecordToolFailure",
    "RecordToolOutcomeUnknown",
    "attempt_progress",
    "idempotency_key",
    "tool_step_for",
]

_UNSUPPORTED_OUTCOME = (
    "dex-agents: the tool returned {kind}, which this session does not support yet; "
    "the tool may have started work"
)


def idempotency_key(flow_id: str, turn_id: str, tool_call_id: str) -> str:
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt."""
    return f"{flow_id}/{turn_id}/{tool_call_id}"


def attempt_progress(context: Context) -> str:
    """The recovery error's attempt_progress: SDK 1.23.0 reports none, so UNSPECIFIED."""
    recovery = context.recovery_error
    progress = getattr(recovery, "attempt_progress", None)
    name = str(getattr(progress, "name", progress)) if progress is not None else ""
    for known in ("NOT_STARTED", "NOT_COMPLETED"):
        if name.endswith(known):
            return known
    return "UNSPECIFIED"


def tool_step_for(effect: ToolEffect) -> type[Step[str]]:
    """CallTool for read and idempotent_write, CallSingleAttemptTool otherwise."""
    if effect in (ToolEffect.READ, ToolEffect.IDEMPOTENT_WRITE):
        return CallTool
    return CallSingleAttemptTool


def _record(runtime: SessionRuntime, context: Context, tool_call_id: str) -> AgentToolCall | None:
    return runtime.schema.tool_calls.get(context, tool_call_id)


# --- approval -------------------------------------------------------------------------


class AwaitToolApproval(Step[str]):
    """Waits for the user's decision on one call, or its deadline.

    Execute holds the PendingInterrupts lock, so it and resolve_interrupt serialize.
    """

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS)

    async def wait_for(self, context: AsyncContext, input: str) -> Wait:
        conditions = [self._runtime.schema.interrupt_resolutions.for_one(input)]
        interrupt = next(
            (i for i in self._runtime.interrupts(context) if i.interrupt_id == input), None
        )
        deadline = utc_from(interrupt.deadline) if interrupt is not None else None
        if deadline is not None:
            conditions.append(Timer.by_duration(ceil_seconds(deadline, utc_now())))
        return Wait.any_of(*conditions)

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = _record(runtime, context, input)
        if record is None or is_final(record.status):
            return dead_end()
        events = runtime.writer(context, record.turn_id)
        try:
            interrupts = runtime.interrupts(context)
            pending = next((i for i in interrupts if i.interrupt_id == input), None)
            resolutions = runtime.schema.interrupt_resolutions.results(context, input)
            if resolutions:
                resolution = resolutions[0]
                if pending is not None:
                    runtime.schema.pending_interrupts.set(
                        context, [i for i in interrupts if i.interrupt_id != input]
                    )
                events.write(
                    InterruptResolvedPayload(
                        interrupt_id=input,
                        approved=resolution.approved,
                        rejection_message=resolution.rejection_message,
                        kind=InterruptKind.TOOL_APPROVAL,
                        answered=False,
                        cancellation_reason=None,
                    )
                )
                if resolution.approved:
                    record.status = ToolCallStatus.APPROVED
                    runtime.schema.tool_calls.set(context, input, record)
                    return go_to(tool_step_for(record.effect), input)
                record.status = ToolCallStatus.REJECTED
                record.rejection_message = resolution.rejection_message
                runtime.finalize_record(context, record, events)
                return dead_end()
            deadline = utc_from(pending.deadline) if pending is not None else None
            if deadline is not None and context.has_timer_fired() and utc_now() >= deadline:
                runtime.schema.pending_interrupts.set(
                    context, [i for i in interrupts if i.interrupt_id != input]
                )
                events.write(
                    InterruptResolvedPayload(
                        interrupt_id=input,
                        approved=False,
                        rejection_message=APPROVAL_DEADLINE_PASSED,
                        kind=InterruptKind.TOOL_APPROVAL,
                        answered=False,
                        cancellation_reason=None,
                    )
                )
                record.status = ToolCallStatus.REJECTED
                record.rejection_message = APPROVAL_DEADLINE_PASSED
                runtime.finalize_record(context, record, events)
                return dead_end()
            # An early Timer, or resolve_interrupt removed the interrupt first: its
            # resolution is queued, so wait again.
            return go_to(AwaitToolApproval, input)
        finally:
            events.close()


# --- running a tool -----------------------------------------------------------------

_WRITE_POLL_SECONDS = 0.0005


async def _await_frames_written(
    context: AsyncContext, marker: Callable[[], Awaitable[None]]
) -> None:
    """Returns once every output this attempt emitted so far was written to the Worker's stream.

    SDK 1.23.0's `heartbeat()` returns once the frame is queued, not sent. The SDK's
    drain loop (`AsyncWorkerDispatcher._drain_outputs`) takes one output off the
    attempt's queue, yields it, and takes the next only after the Worker's transport
    finished writing the yielded frame: the pull stream awaits `call.write(frame)`,
    a listening Worker's gRPC server awaits the response write, before asking the
    generator for more. So after `marker` (one more heartbeat) has been queued, an
    empty queue means the marker was taken off it, and therefore every frame before
    the marker - tool_call_started and the heartbeat - completed its gRPC write.
    The queue offers no event to await, so this polls it. See README "Known limits"
    for what a completed write does and does not promise.
    """
    queue = getattr(getattr(context, "_output_emitter", None), "queue", None)
    if not isinstance(queue, asyncio.Queue):
        return  # not an SDK async Step context (no output stream to wait for)
    await marker()
    while not queue.empty():  # noqa: ASYNC110 - the SDK's queue offers no event to await
        await asyncio.sleep(_WRITE_POLL_SECONDS)


class _ToolStep(Step[str]):
    """Runs one approved call once: tool_call_started, a heartbeat, then the tool."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = _record(runtime, context, input)
        # A final record ends the Step without running or publishing.
        if record is None or record.status is not ToolCallStatus.APPROVED:
            return dead_end()
        events = runtime.writer(context, record.turn_id)
        try:
            saved: list[str | None] = [
                context.get_last_heartbeat_value(str)
                if context.has_last_heartbeat_value()
                else None
            ]
            checkpoint = saved[0]

            async def heartbeat() -> None:
                # Every heartbeat repeats the saved checkpoint, so a retry can read it back.
                if saved[0] is None:
                    await context.heartbeat()
                else:
                    await context.heartbeat(saved[0])

            async def save_checkpoint(value: str) -> None:
                saved[0] = value
                await context.heartbeat(value)

            events.write(ToolCallStartedPayload(tool_call_id=input, tool_name=record.tool_name))
            # Once this output reaches Dex, it never hands the attempt out again as
            # "not started", so the tool cannot run twice under one attempt number.
            await heartbeat()
            await _await_frames_written(context, heartbeat)
            execution = DeferredToolExecution(
                flow_id=context.flow_id,
                turn_id=record.turn_id,
                tool_call=record,
                idempotency_key=idempotency_key(context.flow_id, record.turn_id, input),
                attempt=context.attempt,
                events=events,
                heartbeat=heartbeat,
                save_heartbeat_checkpoint=save_checkpoint,
                heartbeat_checkpoint=checkpoint,
                input_answers=tuple(record.input_answers),
                supports_tool_tasks=isinstance(runtime.runner, ToolTaskPoller),
            )
            try:
                outcome = await runtime.runner.execute_deferred_tool_call(execution)
            except ToolExecutionError as error:
                record.status = ToolCallStatus.FAILED
                record.error = error.message
            else:
                if isinstance(outcome, ToolExecutionResult):
                    record.status = ToolCallStatus.SUCCEEDED
                    record.output = outcome.output
                else:
                    kind = (
                        "a task"
                        if isinstance(outcome, ToolTaskStarted)
                        else "a question"
                        if isinstance(outcome, ToolInputRequested)
                        else type(outcome).__name__
                    )
                    record.status = (
                        ToolCallStatus.FAILED
                        if record.effect is ToolEffect.READ
                        else ToolCallStatus.OUTCOME_UNKNOWN
                    )
                    record.error = _UNSUPPORTED_OUTCOME.format(kind=kind)
            runtime.finalize_record(context, record, events)
            return dead_end()
        finally:
            events.close()


class CallTool(_ToolStep):
    """A read or idempotent_write call: up to 3 attempts, then RecordToolFailure."""

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=LOAD_TOOL_CALLS, execute_retry=TOOL_RETRY
        ).on_execute_failure_proceed_to(
            RecordToolFailure, sync_options(execute_load=LOAD_TOOL_CALLS)
        )


class CallSingleAttemptTool(_ToolStep):
    """A non_idempotent_write or unclassified call: one attempt, then RecordToolOutcomeUnknown."""

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=LOAD_TOOL_CALLS, execute_retry=SINGLE_ATTEMPT
        ).on_execute_failure_proceed_to(
            RecordToolOutcomeUnknown, sync_options(execute_load=LOAD_TOOL_CALLS)
        )


# --- failure routes -----------------------------------------------------------------


class _RecordToolError(Step[str]):
    """Records a call whose tool Step failed for good, from the recovery error."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_TOOL_CALLS)

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        raise NotImplementedError

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        if is_value_too_large_run_state(context):
            state = runtime.state(context)
            recovery = context.recovery_error
            if state is not None and recovery is not None:
                return runtime.end_session_value_too_large(context, state, recovery.detail)
        record = _record(runtime, context, input)
        if record is None or is_final(record.status):
            return dead_end()
        recovery = context.recovery_error
        detail = recovery.detail if recovery is not None else "the tool Step failed"
        if (
            attempt_progress(context) == "NOT_STARTED"
            and record.status is ToolCallStatus.APPROVED
            and not record.input_answers
        ):
            record.status = ToolCallStatus.FAILED
            record.error = f"{TOOL_CALL_NOT_RUN_ERROR_PREFIX}: {detail}"
        else:
            record.status = self._status_by_effect(record)
            record.error = detail
        events = runtime.writer(context, record.turn_id)
        try:
            runtime.finalize_record(context, record, events)
        finally:
            events.close()
        return dead_end()


class RecordToolFailure(_RecordToolError):
    """CallTool ran out of attempts: failed for read, outcome_unknown for idempotent_write."""

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        if record.effect is ToolEffect.READ:
            return ToolCallStatus.FAILED
        return ToolCallStatus.OUTCOME_UNKNOWN


class RecordToolOutcomeUnknown(_RecordToolError):
    """CallSingleAttemptTool failed: the call may have taken effect."""

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        return ToolCallStatus.OUTCOME_UNKNOWN
