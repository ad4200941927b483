"""AwaitQuestionAnswer: ask_user questions and the questions tools and tasks ask.

ask_user's question is raised by RunModel (`raise_ask_user`). A tool's question
is raised here, under the PendingInterrupts lock, because parallel tool Steps
must never write PendingInterrupts themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta

from dex import AsyncContext, Context, StepDecision, StepOptions, Timer, Wait, dead_end, go_to
from dex.condition import Condition
from dex_agents_contracts import (
    AgentInterrupt,
    AgentInterruptResolution,
    AgentToolCall,
    CancellationReason,
    InterruptKind,
    QuestionAnswer,
    QuestionResolution,
    ToolCallStatus,
)

from dex_agents.results import compact_json
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._movements import go_to_poll, go_to_tool_step
from dex_agents.session._rules.questions import (
    interrupt_id_collision_error,
    is_ask_user,
    question_interrupt,
    question_interrupt_id,
)
from dex_agents.session._rules.tool_outcomes import status_by_effect
from dex_agents.session._rules.turn_control import (
    abandon_waiting_record,
    cancellation_wake,
    turn_control_reason,
)
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._step_base import WaitingRecordStep
from dex_agents.session._step_options import LOAD_TOOL_CALLS, LOCK_INTERRUPTS, sync_options
from dex_agents.session._stores.interrupts import interrupt_raised, interrupt_resolved
from dex_agents.session._time import ceil_seconds, utc_from, utc_now

__all__ = ["QUESTION_DEADLINE_PASSED", "USER_DECLINED_TO_ANSWER", "AwaitQuestionAnswer"]

USER_DECLINED_TO_ANSWER = "The user declined to answer."
QUESTION_DEADLINE_PASSED = "question deadline passed"


def _await_options() -> StepOptions:
    # WaitFor reads the record too: it decides between the deadline and a zero Timer.
    return dataclasses.replace(
        sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS),
        wait_for_load_attribute_maps=LOAD_TOOL_CALLS,
    )


class AwaitQuestionAnswer(WaitingRecordStep):
    """Waits for the answer to one call's question, its decline, or its deadline."""

    record_status = ToolCallStatus.AWAITING_ANSWER

    def get_step_options(self) -> StepOptions:
        return _await_options()

    async def wait(self, context: AsyncContext, input: str) -> Wait:
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

    async def decide(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        runtime = self._runtime
        schema = runtime.schema
        input = record.tool_call_id
        interrupt_id = question_interrupt_id(runtime, record)
        interrupts = runtime.interrupts(context)
        pending = _own(interrupts, record, interrupt_id)
        resolutions = schema.interrupt_resolutions.results(context, interrupt_id)
        now = utc_now()
        deadline = utc_from(pending.deadline) if pending is not None else None
        outcome: _Outcome | None = None
        if resolutions:
            outcome = _outcome(resolutions[0])
        elif deadline is not None and context.has_timer_fired() and now >= deadline:
            outcome = _DEADLINE_PASSED
        if outcome is not None:
            if pending is not None:
                runtime.interrupt_store.remove(context, interrupt_id)
            resolution, text, message = outcome
            answered = resolution is QuestionResolution.ANSWERED
            _write_resolved(events, interrupt_id, approved=answered, message=message)
            return self._settle(
                context, record, interrupt_id, resolution=resolution, text=text, events=events
            )
        state = runtime.state(context)
        reason = turn_control_reason(schema, context, state)
        collision = pending is None and _collides(
            runtime, context, record, interrupt_id, interrupts
        )
        answer_queued = schema.interrupt_resolutions.size(context, interrupt_id) > 0
        if pending is None and answer_queued and not collision:
            # An answer committed first: it wins over any wake-up.
            return go_to(runtime.steps.await_question_answer, input)
        if record.task_id:
            # A started task's question is never abandoned; cancel_turn hands the
            # task to FinishTurnCancellation, which cancels it.
            if reason is CancellationReason.TURN_CANCELLED and state is not None:
                return go_to(
                    runtime.steps.finish_turn_cancellation,
                    state.active_turn_id or record.turn_id,
                )
        elif reason is not None:
            abandon_waiting_record(runtime, context, record, reason, events)
            return dead_end()
        if pending is not None or is_ask_user(runtime, record):
            # An early Timer, or a wake-up in a turn that goes on: wait again.
            return go_to(runtime.steps.await_question_answer, input)
        if collision:
            # Raises nothing; a task's call may have taken effect, so it goes by effect.
            record.status = status_by_effect(record) if record.task_id else ToolCallStatus.FAILED
            record.error = interrupt_id_collision_error(interrupt_id)
            runtime.finalize_record(context, record, events)
            return dead_end()
        return self._raise_tool_question(context, record, interrupt_id, events=events, now=now)

    def _raise_tool_question(
        self,
        context: AsyncContext,
        record: AgentToolCall,
        interrupt_id: str,
        *,
        events: StepEventWriter,
        now: datetime,
    ) -> StepDecision:
        runtime = self._runtime
        interrupt = question_interrupt(runtime, record, interrupt_id, now)
        runtime.interrupt_store.add(context, [interrupt])
        events.write(interrupt_raised(interrupt))
        return go_to(runtime.steps.await_question_answer, record.tool_call_id)

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
            record.input_answers.append(_answer(record, interrupt_id, text, resolution))
            record.task_answer_pending = True
            record.status = ToolCallStatus.WAITING_FOR_TASK
            _clear_question(record)
            runtime.schema.tool_calls.set(context, record.tool_call_id, record)
            return go_to_poll(runtime.steps, record)
        if resolution is not QuestionResolution.ANSWERED:
            record.status = ToolCallStatus.REJECTED
            record.rejection_message = text
            runtime.finalize_record(context, record, events)
            return dead_end()
        if is_ask_user(runtime, record):
            record.status = ToolCallStatus.SUCCEEDED
            record.output = compact_json({"status": "answered", "answer": text})
            runtime.finalize_record(context, record, events)
            return dead_end()
        # The tool runs again with the answer; it has not taken any effect yet.
        record.input_answers.append(_answer(record, interrupt_id, text, resolution))
        record.status = ToolCallStatus.APPROVED
        _clear_question(record)
        runtime.schema.tool_calls.set(context, record.tool_call_id, record)
        return go_to_tool_step(runtime, record)


_Outcome = tuple[QuestionResolution, str, str | None]
"""How a question ended: the resolution, what the call gets, the event's rejection message."""

_DEADLINE_PASSED: _Outcome = (
    QuestionResolution.DEADLINE_PASSED,
    QUESTION_DEADLINE_PASSED,
    QUESTION_DEADLINE_PASSED,
)


def _outcome(resolution: AgentInterruptResolution) -> _Outcome:
    if resolution.approved:
        return QuestionResolution.ANSWERED, resolution.answer or "", None
    message = resolution.rejection_message
    text = message if message is not None and message.strip() else USER_DECLINED_TO_ANSWER
    return QuestionResolution.DECLINED, text, message


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
        interrupt_resolved(
            interrupt_id,
            InterruptKind.QUESTION,
            approved=approved,
            rejection_message=message,
            answered=approved,
        )
    )
