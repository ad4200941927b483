"""AwaitQuestionAnswer: ask_user questions and the questions tools and tasks ask.

ask_user's question is raised by RunModel (`raise_ask_user`). A tool's question
is raised here, under the PendingInterrupts lock, because parallel tool Steps
must never write PendingInterrupts themselves.
"""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta

from dex import (
    AsyncContext,
    Context,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    dead_end,
    go_to,
    go_to_many,
)
from dex.condition import Condition
from dex_agents_contracts import (
    AgentInterrupt,
    AgentInterruptResolution,
    AgentToolCall,
    CancellationReason,
    InterruptKind,
    InterruptResolvedPayload,
    QuestionAnswer,
    QuestionResolution,
    ToolCallStatus,
)

from dex_agents._event_writer import StepEventWriter
from dex_agents._runtime import SessionRuntime, ceil_seconds, interrupt_raised, utc_from
from dex_agents._step_options import LOAD_TOOL_CALLS, LOCK_INTERRUPTS, sync_options
from dex_agents._steps_tools import tool_step_for
from dex_agents._time import utc_now
from dex_agents._tool_outcomes import status_by_effect
from dex_agents._turn_control import abandon_waiting_record, cancellation_wake, turn_control_reason
from dex_agents.results import compact_json

__all__ = [
    "QUESTION_DEADLINE_PASSED",
    "USER_DECLINED_TO_ANSWER",
    "AwaitQuestionAnswer",
    "interrupt_id_collision_error",
    "question_interrupt_id",
    "raise_ask_user",
]

USER_DECLINED_TO_ANSWER = "The user declined to answer."
QUESTION_DEADLINE_PASSED = "question deadline passed"


def interrupt_id_collision_error(interrupt_id: str) -> str:
    return (
        f"the tool's question cannot use interrupt ID {interrupt_id}, "
        "which another tool call of this turn uses"
    )


def _is_ask_user(runtime: SessionRuntime, record: AgentToolCall) -> bool:
    # An enabled built-in name is reserved, so such a record is ask_user's own.
    return record.tool_name == "ask_user" and "ask_user" in runtime.options.built_in_tools


def question_interrupt_id(runtime: SessionRuntime, record: AgentToolCall) -> str:
    """ask_user's interrupt is its call ID; a tool's n-th question is `<id>-input-<n>`."""
    if _is_ask_user(runtime, record):
        return record.tool_call_id
    return f"{record.tool_call_id}-input-{len(record.input_answers) + 1}"


def _question_interrupt(
    runtime: SessionRuntime,
    record: AgentToolCall,
    interrupt_id: str,
    now: datetime,
) -> AgentInterrupt:
    deadline_after = runtime.options.interrupt_deadline
    return AgentInterrupt(
        interrupt_id=interrupt_id,
        kind=InterruptKind.QUESTION,
        tool_call_id=record.tool_call_id,
        tool_name=record.tool_name,
        arguments=record.arguments,
        created_at=now,
        deadline=now + deadline_after if deadline_after is not None else None,
        question=record.input_question,
        choices=list(record.input_choices),
        allows_free_text=record.input_allows_free_text,
    )


def raise_ask_user(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    *,
    question: str,
    choices: Sequence[str],
    allows_free_text: bool,
    interrupts: list[AgentInterrupt],
    events: StepEventWriter,
    now: datetime,
) -> StepMovement[str]:
    """RunModel's ask_user call: awaiting_answer with its question interrupt.

    Appends the interrupt to `interrupts`, which the caller stores once for the
    whole response.
    """
    record.status = ToolCallStatus.AWAITING_ANSWER
    record.input_question = question
    record.input_choices = list(choices)
    record.input_allows_free_text = allows_free_text
    interrupt = _question_interrupt(runtime, record, record.tool_call_id, now)
    interrupts.append(interrupt)
    events.write(interrupt_raised(interrupt))
    runtime.schema.tool_calls.set(context, record.tool_call_id, record)
    return StepMovement.of(AwaitQuestionAnswer, record.tool_call_id)


def _await_options() -> StepOptions:
    # WaitFor reads the record too: it decides between the deadline and a zero Timer.
    return dataclasses.replace(
        sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS),
        wait_for_load_attribute_maps=LOAD_TOOL_CALLS,
    )


class AwaitQuestionAnswer(Step[str]):
    """Waits for the answer to one call's question, its decline, or its deadline."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return _await_options()

    async def wait_for(self, context: AsyncContext, input: str) -> Wait:
        runtime = self._runtime
        schema = runtime.schema
        record = schema.tool_calls.get(context, input)
        if record is None or record.status is not ToolCallStatus.AWAITING_ANSWER:
            return Wait.any_of(Timer.by_duration(timedelta(0)))
        interrupt_id = question_interrupt_id(runtime, record)
        interrupts = runtime.interrupts(context)
        pending = _own(interrupts, record, interrupt_id)
        if pending is None and _collides(runtime, context, record, interrupt_id, interrupts):
            # The ID is another call's: never consume its resolution; Execute fails the call.
            return Wait.any_of(Timer.by_duration(timedelta(0)))
        conditions: list[Condition] = [
            cancellation_wake(schema, input),
            schema.interrupt_resolutions.for_one(interrupt_id),
        ]
        if pending is not None:
            deadline = utc_from(pending.deadline)
            if deadline is not None:
                conditions.append(Timer.by_duration(ceil_seconds(deadline, utc_now())))
        elif schema.interrupt_resolutions.size(context, interrupt_id) == 0:
            # Neither raised nor answered: Execute raises it (or decides not to) at once.
            conditions.append(Timer.by_duration(timedelta(0)))
        return Wait.any_of(*conditions)

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = runtime.schema.tool_calls.get(context, input)
        if record is None or record.status is not ToolCallStatus.AWAITING_ANSWER:
            return dead_end()
        events = runtime.writer(context, record.turn_id)
        try:
            return self._decide(context, record, events)
        finally:
            events.close()

    def _decide(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        runtime = self._runtime
        schema = runtime.schema
        input = record.tool_call_id
        interrupt_id = question_interrupt_id(runtime, record)
        interrupts = runtime.interrupts(context)
        pending = _own(interrupts, record, interrupt_id)
        resolutions = schema.interrupt_resolutions.results(context, interrupt_id)
        if resolutions:
            if pending is not None:
                schema.pending_interrupts.set(
                    context, [i for i in interrupts if i.interrupt_id != interrupt_id]
                )
            return self._resolve(context, record, interrupt_id, resolutions[0], events)
        now = utc_now()
        deadline = utc_from(pending.deadline) if pending is not None else None
        if deadline is not None and context.has_timer_fired() and now >= deadline:
            schema.pending_interrupts.set(
                context, [i for i in interrupts if i.interrupt_id != interrupt_id]
            )
            _write_resolved(events, interrupt_id, approved=False, message=QUESTION_DEADLINE_PASSED)
            return self._settle(
                context,
                record,
                interrupt_id,
                resolution=QuestionResolution.DEADLINE_PASSED,
                text=QUESTION_DEADLINE_PASSED,
                events=events,
            )
        state = runtime.state(context)
        reason = turn_control_reason(schema, context, state)
        collision = pending is None and _collides(
            runtime, context, record, interrupt_id, interrupts
        )
        answer_queued = schema.interrupt_resolutions.size(context, interrupt_id) > 0
        if pending is None and answer_queued and not collision:
            # An answer committed first: it wins over any wake-up.
            return go_to(AwaitQuestionAnswer, input)
        if record.task_id:
            # A started task's question is never abandoned; cancel_turn hands the
            # task to FinishTurnCancellation, which cancels it.
            if reason is CancellationReason.TURN_CANCELLED and state is not None:
                return _finish_turn_cancellation(state.active_turn_id or record.turn_id)
        elif reason is not None:
            abandon_waiting_record(runtime, context, record, reason, events)
            return dead_end()
        if pending is not None or _is_ask_user(runtime, record):
            # An early Timer, or a wake-up in a turn that goes on: wait again.
            return go_to(AwaitQuestionAnswer, input)
        if collision:
            # Raises nothing; a task's call may have taken effect, so it goes by effect.
            record.status = status_by_effect(record) if record.task_id else ToolCallStatus.FAILED
            record.error = interrupt_id_collision_error(interrupt_id)
            runtime.finalize_record(context, record, events)
            return dead_end()
        return self._raise_tool_question(
            context, record, interrupt_id, interrupts=interrupts, events=events, now=now
        )

    def _raise_tool_question(
        self,
        context: AsyncContext,
        record: AgentToolCall,
        interrupt_id: str,
        *,
        interrupts: list[AgentInterrupt],
        events: StepEventWriter,
        now: datetime,
    ) -> StepDecision:
        runtime = self._runtime
        interrupt = _question_interrupt(runtime, record, interrupt_id, now)
        runtime.schema.pending_interrupts.set(context, [*interrupts, interrupt])
        events.write(interrupt_raised(interrupt))
        return go_to(AwaitQuestionAnswer, record.tool_call_id)

    def _resolve(
        self,
        context: AsyncContext,
        record: AgentToolCall,
        interrupt_id: str,
        resolution: AgentInterruptResolution,
        events: StepEventWriter,
    ) -> StepDecision:
        if resolution.approved:
            answer = resolution.answer or ""
            _write_resolved(events, interrupt_id, approved=True, message=None)
            return self._settle(
                context,
                record,
                interrupt_id,
                resolution=QuestionResolution.ANSWERED,
                text=answer,
                events=events,
            )
        message = resolution.rejection_message
        _write_resolved(events, interrupt_id, approved=False, message=message)
        text = message if message is not None and message.strip() else USER_DECLINED_TO_ANSWER
        return self._settle(
            context,
            record,
            interrupt_id,
            resolution=QuestionResolution.DECLINED,
            text=text,
            events=events,
        )

    def _settle(
        self,
        context: AsyncContext,
        record: AgentToolCall,
        interrupt_id: str,
        *,
        resolution: QuestionResolution,
        text: str,
        events: StepEventWriter,
    ) -> StepDecision:
        """Apply an answer, a decline or a passed deadline (`text` is what the call gets)."""
        runtime = self._runtime
        if record.task_id:
            # The task receives every resolution through its next poll.
            from dex_agents._steps_tasks import poll_movement  # noqa: PLC0415 - cycle

            record.input_answers.append(_answer(record, interrupt_id, text, resolution))
            record.task_answer_pending = True
            record.status = ToolCallStatus.WAITING_FOR_TASK
            _clear_question(record)
            runtime.schema.tool_calls.set(context, record.tool_call_id, record)
            return go_to_many(poll_movement(record))
        if resolution is not QuestionResolution.ANSWERED:
            record.status = ToolCallStatus.REJECTED
            record.rejection_message = text
            runtime.finalize_record(context, record, events)
            return dead_end()
        if _is_ask_user(runtime, record):
            record.status = ToolCallStatus.SUCCEEDED
            record.output = compact_json({"status": "answered", "answer": text})
            runtime.finalize_record(context, record, events)
            return dead_end()
        # The tool runs again with the answer; it has not taken any effect yet.
        record.input_answers.append(_answer(record, interrupt_id, text, resolution))
        record.status = ToolCallStatus.APPROVED
        _clear_question(record)
        runtime.schema.tool_calls.set(context, record.tool_call_id, record)
        return go_to(tool_step_for(record.effect), record.tool_call_id)


def _own(
    interrupts: Sequence[AgentInterrupt], record: AgentToolCall, interrupt_id: str
) -> AgentInterrupt | None:
    """The call's own pending interrupt with this ID."""
    return next(
        (
            i
            for i in interrupts
            if i.interrupt_id == interrupt_id and i.tool_call_id == record.tool_call_id
        ),
        None,
    )


def _collides(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    interrupt_id: str,
    interrupts: Sequence[AgentInterrupt],
) -> bool:
    """Another call's pending interrupt or record already uses the question's ID."""
    if any(
        i.interrupt_id == interrupt_id and i.tool_call_id != record.tool_call_id for i in interrupts
    ):
        return True
    return interrupt_id != record.tool_call_id and (
        runtime.schema.tool_calls.get(context, interrupt_id) is not None
    )


def _answer(
    record: AgentToolCall, interrupt_id: str, text: str, resolution: QuestionResolution
) -> QuestionAnswer:
    return QuestionAnswer(
        interrupt_id=interrupt_id,
        question=record.input_question or "",
        answer=text,
        resolution=resolution,
    )


def _clear_question(record: AgentToolCall) -> None:
    # input_continuation stays: the tool or the task's next poll needs it.
    record.input_question = None
    record.input_choices = []
    record.input_allows_free_text = True


def _write_resolved(
    events: StepEventWriter, interrupt_id: str, *, approved: bool, message: str | None
) -> None:
    events.write(
        InterruptResolvedPayload(
            interrupt_id=interrupt_id,
            approved=approved,
            rejection_message=message,
            kind=InterruptKind.QUESTION,
            answered=approved,
            cancellation_reason=None,
        )
    )


def _finish_turn_cancellation(turn_id: str) -> StepDecision:
    from dex_agents._steps_control import FinishTurnCancellation  # noqa: PLC0415 - cycle

    return go_to(FinishTurnCancellation, turn_id)
