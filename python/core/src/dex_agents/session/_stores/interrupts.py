"""InterruptStore: the one place that rewrites PendingInterrupts.

PendingInterrupts is a single list Attribute that RunModel, the waiting Steps,
the turn's end and the interrupt RPCs all change. Each rewrite reads the list
and writes it whole, so every caller goes through these few operations instead
of filtering and setting the list itself. Callers that remove an interrupt hold
the PendingInterrupts lock (RunModel and the turn's end run while nobody else
may raise one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from dex import Context
from dex_agents_contracts import (
    AgentInterrupt,
    AgentToolCall,
    CancellationReason,
    InterruptKind,
    InterruptRaisedPayload,
    InterruptResolvedPayload,
)

from dex_agents.session._schema import SessionSchema

__all__ = ["InterruptStore", "interrupt_raised", "interrupt_resolved", "new_interrupt"]


def new_interrupt(
    call: AgentToolCall,
    kind: InterruptKind,
    interrupt_id: str,
    *,
    now: datetime,
    deadline_after: timedelta | None,
) -> AgentInterrupt:
    """An approval (no question) or a question interrupt of one tool call, raised `now`.

    A question is the record's `input_question`, `input_choices` and
    `input_allows_free_text`; an approval allows free text.
    """
    question = kind is InterruptKind.QUESTION
    return AgentInterrupt(
        interrupt_id=interrupt_id,
        kind=kind,
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        created_at=now,
        deadline=now + deadline_after if deadline_after is not None else None,
        question=call.input_question if question else None,
        choices=list(call.input_choices) if question else [],
        allows_free_text=call.input_allows_free_text if question else True,
    )


def interrupt_raised(interrupt: AgentInterrupt) -> InterruptRaisedPayload:
    """The interrupt_raised event of an approval or question interrupt."""
    return InterruptRaisedPayload(
        interrupt_id=interrupt.interrupt_id,
        tool_call_id=interrupt.tool_call_id,
        tool_name=interrupt.tool_name,
        deadline=interrupt.deadline,
        kind=interrupt.kind,
        question=interrupt.question,
        choices=list(interrupt.choices),
        allows_free_text=interrupt.allows_free_text,
    )


def interrupt_resolved(
    interrupt_id: str,
    kind: InterruptKind,
    *,
    approved: bool,
    rejection_message: str | None,
    answered: bool = False,
    cancellation_reason: CancellationReason | None = None,
) -> InterruptResolvedPayload:
    """The interrupt_resolved event: approved, answered, declined, expired or abandoned."""
    return InterruptResolvedPayload(
        interrupt_id=interrupt_id,
        approved=approved,
        rejection_message=rejection_message,
        kind=kind,
        answered=answered,
        cancellation_reason=cancellation_reason,
    )


@dataclass(frozen=True)
class InterruptStore:
    """Reads and rewrites a session's PendingInterrupts inside one Step or RPC Context."""

    schema: SessionSchema

    def pending(self, context: Context) -> list[AgentInterrupt]:
        return list(self.schema.pending_interrupts.get(context) or [])

    def find(self, context: Context, interrupt_id: str) -> AgentInterrupt | None:
        return next((i for i in self.pending(context) if i.interrupt_id == interrupt_id), None)

    def clear(self, context: Context) -> None:
        """No interrupt pending: a new session, or a turn that ended."""
        self.schema.pending_interrupts.set(context, [])

    def add(self, context: Context, raised: Sequence[AgentInterrupt]) -> None:
        """Append `raised` (written even when it is empty, as one response's store)."""
        self.schema.pending_interrupts.set(context, [*self.pending(context), *raised])

    def remove(self, context: Context, interrupt_id: str) -> None:
        """Drop the interrupt with this ID (answered, resolved, or past its deadline)."""
        self.schema.pending_interrupts.set(
            context, [i for i in self.pending(context) if i.interrupt_id != interrupt_id]
        )

    def remove_for_call(self, context: Context, tool_call_id: str) -> list[AgentInterrupt]:
        """Drop every interrupt of one tool call; returns them (nothing written if none)."""
        interrupts = self.pending(context)
        removed = [i for i in interrupts if i.tool_call_id == tool_call_id]
        if removed:
            self.schema.pending_interrupts.set(
                context, [i for i in interrupts if i.tool_call_id != tool_call_id]
            )
        return removed
