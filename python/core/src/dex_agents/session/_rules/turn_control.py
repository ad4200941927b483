"""Steering and cancellation: the two flags, the one abandon predicate, the rejection texts.

Every boundary decides from committed state only: a turn is cancelled while
TurnCancellationRequest names it, and steered while SteeredUserMessages holds
a message. Waiting Steps, ResumeTurn and the tool Steps all ask these helpers,
so the rules cannot drift apart between them.
"""

from __future__ import annotations

import logging

from dex import AsyncContext, Context
from dex.condition import Condition
from dex_agents_contracts import (
    AgentState,
    AgentToolCall,
    CancellationReason,
    ToolCallStatus,
)

from dex_agents._runner.awaitables import resolved
from dex_agents.errors import ValueTooLarge
from dex_agents.results import tool_call_note
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import SessionSchema
from dex_agents.session._stores.interrupts import interrupt_resolved

__all__ = [
    "CANCELLED_NOTE_HEADER",
    "STEERED_NOTE_HEADER",
    "SUPERSEDED_BY_STEER_RESULT",
    "TASK_CANCELLED_ERROR",
    "TURN_CANCELLED_RESULT",
    "abandon_waiting_record",
    "abandons_waiting",
    "cancellation_wake",
    "end_controlled_turn",
    "rejection_message_for",
    "remove_pending_interrupts",
    "turn_cancelled",
    "turn_control_reason",
    "turn_steered",
]

_log = logging.getLogger("dex_agents")

SUPERSEDED_BY_STEER_RESULT = '{"status":"cancelled","reason":"superseded_by_steered_user_message"}'
TURN_CANCELLED_RESULT = '{"status":"cancelled","reason":"turn_cancelled_by_user"}'
STEERED_NOTE_HEADER = "[Dex] The user steered the conversation after these tool calls ran:"
CANCELLED_NOTE_HEADER = "[Dex] The user stopped the previous turn after these tool calls ran:"
TASK_CANCELLED_ERROR = (
    "the turn was cancelled while the tool's task was running; the task may have taken effect"
)


def turn_cancelled(schema: SessionSchema, context: Context, state: AgentState | None) -> bool:
    """TurnCancellationRequest names the active turn (turn IDs never repeat)."""
    if state is None or state.active_turn_id is None:
        return False
    request = schema.turn_cancellation_request.get(context)
    return request is not None and request.turn_id == state.active_turn_id


def turn_steered(schema: SessionSchema, context: Context) -> bool:
    """A steered message waits in SteeredUserMessages (channel sizes come with every request)."""
    return schema.steered_user_messages.size(context) > 0


def turn_control_reason(
    schema: SessionSchema, context: Context, state: AgentState | None
) -> CancellationReason | None:
    """Why the active turn must stop at this boundary; cancelled wins over steered."""
    if state is None or state.active_turn_id is None:
        return None
    if turn_cancelled(schema, context, state):
        return CancellationReason.TURN_CANCELLED
    if turn_steered(schema, context):
        return CancellationReason.STEERED
    return None


def abandons_waiting(record: AgentToolCall) -> bool:
    """The one predicate: a waiting call that has taken no effect may be abandoned.

    An approval, a question no started task asked, or a durable wait. A record
    with task_id belongs to remote work that started and is left to finish.
    """
    status = record.status
    if status in (ToolCallStatus.AWAITING_APPROVAL, ToolCallStatus.WAITING_FOR_TIMER):
        return True
    return status is ToolCallStatus.AWAITING_ANSWER and not record.task_id


def rejection_message_for(reason: CancellationReason) -> str:
    """The structured result the model sees for a call steering or cancel_turn abandoned."""
    if reason is CancellationReason.TURN_CANCELLED:
        return TURN_CANCELLED_RESULT
    return SUPERSEDED_BY_STEER_RESULT


def cancellation_wake(schema: SessionSchema, tool_call_id: str) -> Condition:
    """The condition that wakes a waiting call's Step when ResumeTurn abandons it."""
    return schema.tool_call_cancellations.for_one(tool_call_id)


def abandon_waiting_record(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    reason: CancellationReason,
    events: StepEventWriter,
    *,
    remove_interrupt: bool = True,
) -> None:
    """Record a call that never started as rejected with the cancellation result.

    Removes its pending interrupt (with interrupt_resolved) when the caller holds
    the PendingInterrupts lock, and publishes the call's one ToolCallCompleted.
    """
    if remove_interrupt:
        remove_pending_interrupts(runtime, context, record, reason, events)
    record.status = ToolCallStatus.REJECTED
    record.cancellation_reason = reason
    record.rejection_message = rejection_message_for(reason)
    runtime.finalize_record(context, record, events)


def remove_pending_interrupts(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    reason: CancellationReason,
    events: StepEventWriter,
) -> bool:
    """Remove the call's pending interrupts, writing interrupt_resolved for each.

    The caller holds the PendingInterrupts lock. False when none was pending.
    """
    removed = runtime.interrupt_store.remove_for_call(context, record.tool_call_id)
    if not removed:
        return False
    for interrupt in removed:
        events.write(
            interrupt_resolved(
                interrupt.interrupt_id,
                interrupt.kind,
                approved=False,
                rejection_message=rejection_message_for(reason),
                cancellation_reason=reason,
            )
        )
    return True


async def end_controlled_turn(
    runtime: SessionRuntime,
    context: AsyncContext,
    state: AgentState,
    reason: CancellationReason,
    events: StepEventWriter,
    *,
    steered_message_count: int,
) -> None:
    """End the active turn as steered or cancelled; every record of it is final.

    The runner's unfinished-turn messages keep the exact transcript when it
    builds them; otherwise a turn with records gets the steered or cancelled
    note, so the model knows what already ran.
    """
    turn_id = state.active_turn_id
    assert turn_id is not None
    records = runtime.turn_records(context, turn_id)
    stored = False
    if runtime.declared.unfinished_turn_builder is not None:
        unfinished = await runtime.unfinished_messages(context, state, turn_id, events)
        if unfinished is not None:
            try:
                runtime.append_messages(context, state, turn_id, unfinished)
                stored = True
            except ValueTooLarge:
                _log.warning("unfinished-turn messages too large to store; the note is stored")
    if not stored:
        header = (
            CANCELLED_NOTE_HEADER
            if reason is CancellationReason.TURN_CANCELLED
            else STEERED_NOTE_HEADER
        )
        note = tool_call_note(records, header=header)
        if note is not None:
            message = await resolved(runtime.runner.build_user_message(note))
            runtime.append_messages(context, state, turn_id, [message])
    runtime.end_turn(
        context,
        state,
        turn_id,
        events,
        error=None,
        ended_by=reason,
        steered_message_count=steered_message_count,
    )
