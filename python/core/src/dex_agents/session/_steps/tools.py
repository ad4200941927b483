"""Tool call Steps: AwaitToolApproval, CallTool, CallSingleAttemptTool and their failure routes.

Each tool call is its own Step whose input is the tool call ID, so parallel
calls and their failure routes never share a "current call".
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from dex import AsyncContext, Context, StepDecision, StepOptions, Timer, Wait, dead_end, go_to
from dex_agents_contracts import (
    AgentToolCall,
    CancellationReason,
    InterruptKind,
    ToolCallStartedPayload,
    ToolCallStatus,
    ToolTaskStartedPayload,
)

from dex_agents.results import APPROVAL_DEADLINE_PASSED, TOOL_CALL_NOT_RUN_ERROR_PREFIX, is_final
from dex_agents.runner import (
    DeferredToolExecution,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
)
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._movements import go_to_poll, go_to_tool_step
from dex_agents.session._output_drain import OutputDrainWatch
from dex_agents.session._rules.tool_outcomes import (
    TASK_ID_BLANK_ERROR,
    TASK_INTERVAL_NOT_A_NUMBER_ERROR,
    TASK_POLLING_UNSUPPORTED_ERROR,
    idempotency_key,
    poll_interval_seconds,
    record_question,
    status_by_effect,
)
from dex_agents.session._rules.tool_started import (
    ToolNotStartedError,
    attempt_progress,
    tool_never_ran,
)
from dex_agents.session._rules.turn_control import (
    TASK_CANCELLED_ERROR,
    abandon_waiting_record,
    cancellation_wake,
    turn_control_reason,
)
from dex_agents.session._runtime import SessionRuntime, is_value_too_large_run_state
from dex_agents.session._step_base import SessionStep, WaitingSessionStep
from dex_agents.session._step_options import (
    LOAD_TOOL_CALLS,
    LOCK_INTERRUPTS,
    SINGLE_ATTEMPT,
    TOOL_RETRY,
    sync_options,
    tool_record_options,
)
from dex_agents.session._stores.interrupts import interrupt_resolved
from dex_agents.session._time import ceil_seconds, utc_from, utc_now
from dex_agents.session._tool_lanes import hand_over

__all__ = [
    "AwaitToolApproval",
    "CallSingleAttemptTool",
    "CallTool",
    "RecordToolFailure",
    "RecordToolOutcomeUnknown",
    "attempt_progress",
    "idempotency_key",
]


def _record(runtime: SessionRuntime, context: Context, tool_call_id: str) -> AgentToolCall | None:
    return runtime.schema.tool_calls.get(context, tool_call_id)


# --- approval -------------------------------------------------------------------------


class AwaitToolApproval(WaitingSessionStep[str]):
    """Waits for the user's decision on one call, or its deadline.

    Execute holds the PendingInterrupts lock, so it and resolve_interrupt serialize.
    """

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS)

    async def wait(self, context: AsyncContext, input: str) -> Wait:
        schema = self._runtime.schema
        conditions = [cancellation_wake(schema, input), schema.interrupt_resolutions.for_one(input)]
        interrupt = self._runtime.interrupt_store.find(context, input)
        deadline = utc_from(interrupt.deadline) if interrupt is not None else None
        if deadline is not None:
            conditions.append(Timer.by_duration(ceil_seconds(deadline, utc_now())))
        return Wait.any_of(*conditions)

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = _record(runtime, context, input)
        if record is None or is_final(record.status):
            return dead_end()
        with runtime.writer(context, record.turn_id) as events:
            pending = runtime.interrupt_store.find(context, input)
            if runtime.schema.tool_call_cancellations.results(context, input):
                # The wake only says "look": the committed flags decide.
                reason = turn_control_reason(runtime.schema, context, runtime.state(context))
                answer_pending = runtime.schema.interrupt_resolutions.size(context, input) > 0
                if reason is None or (pending is None and answer_pending):
                    return go_to(
                        runtime.steps.await_tool_approval, input
                    )  # an answer that committed first wins
                abandon_waiting_record(runtime, context, record, reason, events)
                return dead_end()
            resolutions = runtime.schema.interrupt_resolutions.results(context, input)
            if resolutions:
                resolution = resolutions[0]
                # The user's answer is an outside input: its own activation, whose
                # root the call's spans join from now on.
                record.trace_context = runtime.activate(
                    context, turn_id=record.turn_id, activation="approval", tool_call_id=input
                )
                if pending is not None:
                    runtime.interrupt_store.remove(context, input)
                events.write(
                    interrupt_resolved(
                        input,
                        InterruptKind.TOOL_APPROVAL,
                        approved=resolution.approved,
                        rejection_message=resolution.rejection_message,
                    )
                )
                if resolution.approved:
                    record.status = ToolCallStatus.APPROVED
                    runtime.schema.tool_calls.set(context, input, record)
                    return go_to_tool_step(runtime, record)
                record.status = ToolCallStatus.REJECTED
                record.rejection_message = resolution.rejection_message
                runtime.finalize_record(context, record, events)
                return dead_end()
            deadline = utc_from(pending.deadline) if pending is not None else None
            if deadline is not None and context.has_timer_fired() and utc_now() >= deadline:
                record.trace_context = runtime.activate(
                    context,
                    turn_id=record.turn_id,
                    activation="approval_deadline",
                    tool_call_id=input,
                )
                runtime.interrupt_store.remove(context, input)
                events.write(
                    interrupt_resolved(
                        input,
                        InterruptKind.TOOL_APPROVAL,
                        approved=False,
                        rejection_message=APPROVAL_DEADLINE_PASSED,
                    )
                )
                record.status = ToolCallStatus.REJECTED
                record.rejection_message = APPROVAL_DEADLINE_PASSED
                runtime.finalize_record(context, record, events)
                return dead_end()
            # An early Timer, or resolve_interrupt removed the interrupt first: its
            # resolution is queued, so wait again.
            return go_to(runtime.steps.await_tool_approval, input)


# --- running a tool -----------------------------------------------------------------


@contextmanager
def _before_the_tool(context: Context) -> Iterator[None]:
    """A failure here, before tool_call_started, on the first attempt: the tool never ran."""
    try:
        yield
    except Exception as error:
        if context.attempt != 1:
            raise  # an earlier attempt may have run the tool
        raise ToolNotStartedError(
            f"the tool Step failed before the tool started: {error}"
        ) from error


class _ToolStep(SessionStep[str]):
    """Runs one approved call once: tool_call_started, a heartbeat, then the tool.

    Whatever it decides, the same commit starts the next call of its lane
    (`_tool_lanes`). A failure before tool_call_started on the first attempt is
    raised as `ToolNotStartedError`, the failure route's proof that the tool never
    ran. A record no longer approved belongs to another Step: it ends at once.
    """

    _retried: ClassVar[bool]
    """Whether the call's effect allows more than one attempt (see `SessionSteps`)."""

    def get_step_options(self) -> StepOptions:
        steps = self._runtime.steps
        retry, route = (
            (TOOL_RETRY, steps.record_tool_failure)
            if self._retried
            else (SINGLE_ATTEMPT, steps.record_tool_outcome_unknown)
        )
        return sync_options(
            execute_load=LOAD_TOOL_CALLS, execute_retry=retry
        ).on_execute_failure_proceed_to(route, tool_record_options())

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        return hand_over(self._runtime, context, input, await self._attempt(context, input))

    async def _attempt(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        with _before_the_tool(context):
            record = runtime.record_in(context, input, ToolCallStatus.APPROVED)
        if record is None:
            return dead_end()
        with runtime.writer(context, record.turn_id) as events:
            with _before_the_tool(context):
                # The last point where steering or cancel_turn can stop the call: it
                # has not started, so it is recorded cancelled (retries reuse this load).
                reason = turn_control_reason(runtime.schema, context, runtime.state(context))
                if reason is not None:
                    abandon_waiting_record(
                        runtime, context, record, reason, events, remove_interrupt=False
                    )
                    return dead_end()
            return await self._run_tool(context, record, events)

    async def _run_tool(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        runtime = self._runtime
        input = record.tool_call_id
        saved: list[str | None] = [
            context.get_last_heartbeat_value(str) if context.has_last_heartbeat_value() else None
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

        with OutputDrainWatch(context) as drain:
            events.write(ToolCallStartedPayload(tool_call_id=input, tool_name=record.tool_name))
            # Once this output reaches Dex, it never hands the attempt out again as
            # "not started", so the tool cannot run twice under one attempt number.
            await heartbeat()
            await drain.written()
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
            supports_tool_tasks=runtime.declared.tool_task_poller is not None,
        )
        try:
            with runtime.tracing.tool_call(record) as span:
                outcome = await runtime.runner.execute_deferred_tool_call(execution)
                if isinstance(outcome, ToolExecutionResult):
                    span.result(outcome.output)
        except ToolExecutionError as error:
            record.status = ToolCallStatus.FAILED
            record.error = error.message
        else:
            if isinstance(outcome, ToolInputRequested):
                return self._await_answer(context, record, outcome)
            if isinstance(outcome, ToolTaskStarted):
                return self._follow_task(context, record, outcome, events)
            if not isinstance(outcome, ToolExecutionResult):
                raise TypeError(
                    f"execute_deferred_tool_call returned {type(outcome).__name__}, "
                    "not a tool outcome"
                )
            record.status = ToolCallStatus.SUCCEEDED
            record.output = outcome.output
        runtime.finalize_record(context, record, events)
        return dead_end()

    def _await_answer(
        self, context: AsyncContext, record: AgentToolCall, question: ToolInputRequested
    ) -> StepDecision:
        """AwaitQuestionAnswer raises the question under the PendingInterrupts lock,
        so parallel tool Steps never write PendingInterrupts."""
        runtime = self._runtime
        record_question(record, question)
        runtime.schema.tool_calls.set(context, record.tool_call_id, record)
        return go_to(runtime.steps.await_question_answer, record.tool_call_id)

    def _follow_task(
        self,
        context: AsyncContext,
        record: AgentToolCall,
        started: ToolTaskStarted,
        events: StepEventWriter,
    ) -> StepDecision:
        """PollToolTask follows a started task; one nobody can poll is recorded by effect."""
        runtime = self._runtime
        interval = poll_interval_seconds(started.poll_interval_seconds)
        task_id = started.task_id
        problem: str | None = None
        if runtime.declared.tool_task_poller is None:
            problem = TASK_POLLING_UNSUPPORTED_ERROR
        elif not isinstance(task_id, str) or not task_id.strip():
            problem = TASK_ID_BLANK_ERROR
        elif interval is None:
            problem = TASK_INTERVAL_NOT_A_NUMBER_ERROR
        if problem is not None:
            # The task may run anyway, so a write's outcome is unknown.
            record.status = status_by_effect(record)
            record.error = problem
            runtime.finalize_record(context, record, events)
            return dead_end()
        record.status = ToolCallStatus.WAITING_FOR_TASK
        record.task_id = task_id
        record.task_poll_interval_seconds = interval
        record.input_continuation = None
        runtime.schema.tool_calls.set(context, record.tool_call_id, record)
        events.write(
            ToolTaskStartedPayload(
                tool_call_id=record.tool_call_id, tool_name=record.tool_name, task_id=task_id
            )
        )
        return go_to_poll(runtime.steps, record)


class CallTool(_ToolStep):
    """A read or idempotent_write call: up to 3 attempts, then RecordToolFailure."""

    _retried = True


class CallSingleAttemptTool(_ToolStep):
    """A non_idempotent_write or unclassified call: one attempt, then RecordToolOutcomeUnknown."""

    _retried = False


# --- failure routes -----------------------------------------------------------------


class _RecordToolError(SessionStep[str]):
    """Records a call whose tool Step failed for good, from the recovery error.

    Like the tool Step it stands in for, it starts the next call of the lane.
    """

    _single_attempt: ClassVar[bool]
    """Whether the tool Step it follows has one attempt (`tool_never_ran`)."""

    def get_step_options(self) -> StepOptions:
        return tool_record_options()

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        raise NotImplementedError

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        return hand_over(self._runtime, context, input, await self._record(context, input))

    async def _record(self, context: AsyncContext, input: str) -> StepDecision:
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
            record.status is ToolCallStatus.APPROVED
            and not record.input_answers
            and tool_never_ran(context, single_attempt=self._single_attempt)
        ):
            record.status = ToolCallStatus.FAILED
            record.error = f"{TOOL_CALL_NOT_RUN_ERROR_PREFIX}: {detail}"
        elif record.task_id and record.cancellation_reason is CancellationReason.TURN_CANCELLED:
            # CancelToolTask's failure route: the abandoned task may still have run.
            record.status = ToolCallStatus.OUTCOME_UNKNOWN
            record.error = TASK_CANCELLED_ERROR
        else:
            record.status = self._status_by_effect(record)
            record.error = detail
        with runtime.writer(context, record.turn_id) as events:
            runtime.finalize_record(context, record, events)
        return dead_end()


class RecordToolFailure(_RecordToolError):
    """CallTool ran out of attempts: failed for read, outcome_unknown for idempotent_write."""

    _single_attempt = False

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        return status_by_effect(record)


class RecordToolOutcomeUnknown(_RecordToolError):
    """CallSingleAttemptTool failed: the call may have taken effect."""

    _single_attempt = True

    def _status_by_effect(self, record: AgentToolCall) -> ToolCallStatus:
        return ToolCallStatus.OUTCOME_UNKNOWN
