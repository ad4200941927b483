"""PollToolTask and CancelToolTask: following remote work a tool started.

A started task may take effect at any time, so its record is never abandoned:
steering leaves it alone, and only cancel_turn cancels it, through
FinishTurnCancellation and CancelToolTask.
"""

from __future__ import annotations

from datetime import timedelta

from dex import AsyncContext, RetryPolicy, StepDecision, StepOptions, Timer, Wait, dead_end, go_to
from dex_agents_contracts import AgentToolCall, CancellationReason, ToolCallStatus, ToolEffect

from dex_agents._runner.capabilities import ToolTaskCancellation, ToolTaskPending, ToolTaskPoll
from dex_agents.results import is_final
from dex_agents.runner import ToolExecutionError, ToolExecutionResult, ToolInputRequested
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._movements import go_to_poll
from dex_agents.session._rules.tool_outcomes import (
    idempotency_key,
    poll_interval_seconds,
    record_question,
)
from dex_agents.session._rules.turn_control import TASK_CANCELLED_ERROR, turn_cancelled
from dex_agents.session._step_base import SessionStep, WaitingSessionStep
from dex_agents.session._step_options import (
    LOAD_TOOL_CALLS,
    poll_options,
    sync_options,
    tool_record_options,
)

__all__ = ["CANCEL_TASK_RETRY", "CancelToolTask", "PollToolTask"]

CANCEL_TASK_RETRY = RetryPolicy(maximum_attempts=3, total_duration=timedelta(minutes=2))

_POLL_INTERVAL_NOT_A_NUMBER = (
    "dex-agents: poll_tool_task returned ToolTaskPending whose poll_interval_seconds "
    "is not a number"
)


class PollToolTask(WaitingSessionStep[str]):
    """Polls a started task once per interval, or at once to hand it an answer."""

    def get_step_options(self) -> StepOptions:
        # Only for a movement without options; `go_to_poll` sets them by effect.
        return poll_options(self._runtime.steps, ToolEffect.READ)

    async def wait(self, context: AsyncContext, input: str) -> Wait:
        runtime = self._runtime
        record = runtime.schema.tool_calls.get(context, input)
        zero = timedelta(0)
        if record is None or record.task_answer_pending:
            return Wait.any_of(Timer.by_duration(zero))  # a resolved question goes at once
        if turn_cancelled(runtime.schema, context, runtime.state(context)):
            # cancel_turn committed before this Step started: hand over without polling.
            return Wait.any_of(Timer.by_duration(zero))
        seconds = record.task_poll_interval_seconds or 1
        return Wait.any_of(Timer.by_duration(timedelta(seconds=seconds)))

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = runtime.record_in(context, input, ToolCallStatus.WAITING_FOR_TASK)
        if record is None:
            return dead_end()
        state = runtime.state(context)
        if turn_cancelled(runtime.schema, context, state) and state is not None:
            return go_to(
                runtime.steps.finish_turn_cancellation, state.active_turn_id or record.turn_id
            )
        runner = runtime.declared.tool_task_poller
        if runner is None:
            raise TypeError("dex-agents: the runner no longer declares tool_task_polls")
        with runtime.writer(context, record.turn_id) as events:
            pending_answer = (
                record.input_answers[-1]
                if record.task_answer_pending and record.input_answers
                else None
            )
            poll = ToolTaskPoll(
                flow_id=context.flow_id,
                tool_call=record,
                idempotency_key=idempotency_key(context.flow_id, record.turn_id, input),
                attempt=context.attempt,
                input_answers=tuple(record.input_answers),
                events=events,
                heartbeat=context.heartbeat,
                pending_answer=pending_answer,
            )
            try:
                with runtime.tracing.tool_call(record) as span:
                    outcome = await runner.poll_tool_task(poll)
                    if isinstance(outcome, ToolExecutionResult):
                        span.result(outcome.output)
            except ToolExecutionError as error:
                record.status = ToolCallStatus.FAILED
                record.error = error.message
                return self._finish(context, record, events)
            # The task has the answer once this commit lands.
            record.task_answer_pending = False
            if isinstance(outcome, ToolExecutionResult):
                record.status = ToolCallStatus.SUCCEEDED
                record.output = outcome.output
                return self._finish(context, record, events)
            if isinstance(outcome, ToolInputRequested):
                record_question(record, outcome)
                runtime.schema.tool_calls.set(context, input, record)
                return go_to(runtime.steps.await_question_answer, input)
            if not isinstance(outcome, ToolTaskPending):
                raise TypeError(
                    f"poll_tool_task returned {type(outcome).__name__}, not a poll outcome"
                )
            interval = poll_interval_seconds(outcome.poll_interval_seconds)
            if interval is None:
                raise ValueError(_POLL_INTERVAL_NOT_A_NUMBER)
            record.task_poll_interval_seconds = interval
            record.input_continuation = outcome.continuation
            runtime.schema.tool_calls.set(context, input, record)
            return go_to_poll(runtime.steps, record)

    def _finish(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        record.task_answer_pending = False
        self._runtime.finalize_record(context, record, events)
        return dead_end()


class CancelToolTask(SessionStep[str]):
    """Asks the runner to cancel a task cancel_turn abandoned; its outcome stays unknown."""

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=LOAD_TOOL_CALLS,
            execute_retry=CANCEL_TASK_RETRY,
            execute_method_timeout=timedelta(seconds=30),
        ).on_execute_failure_proceed_to(
            self._runtime.steps.record_tool_outcome_unknown, tool_record_options()
        )

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = runtime.schema.tool_calls.get(context, input)
        if record is None or is_final(record.status):
            return dead_end()
        runner = runtime.declared.tool_task_canceller
        if runner is not None:
            await runner.cancel_tool_task(
                ToolTaskCancellation(
                    flow_id=context.flow_id,
                    tool_call=record,
                    idempotency_key=idempotency_key(context.flow_id, record.turn_id, input),
                    attempt=context.attempt,
                    heartbeat=context.heartbeat,
                )
            )
        record.status = ToolCallStatus.OUTCOME_UNKNOWN
        record.error = TASK_CANCELLED_ERROR
        record.cancellation_reason = CancellationReason.TURN_CANCELLED
        record.task_answer_pending = False
        with runtime.writer(context, record.turn_id) as events:
            runtime.finalize_record(context, record, events)
        return dead_end()
