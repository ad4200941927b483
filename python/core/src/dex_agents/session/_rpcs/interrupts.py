"""The rules of resolve_interrupt and answer_question: one check, lookup, deadline, publish.

Both RPCs hold the PendingInterrupts lock. An interrupt is resolved once: the
RPC removes it from PendingInterrupts and publishes the resolution its waiting
Step consumes, in the same commit; an expired or unknown one is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from dex import Context
from dex_agents_contracts import (
    AgentInterrupt,
    AgentInterruptResolution,
    AnswerQuestionRequest,
    InterruptKind,
    ResolveInterruptRequest,
)

from dex_agents.session._schema import SessionSchema
from dex_agents.session._stores.interrupts import InterruptStore
from dex_agents.session._time import utc_from, utc_now

__all__ = ["answer_question", "resolve_interrupt"]


def resolve_interrupt(
    schema: SessionSchema, context: Context, request: ResolveInterruptRequest
) -> bool:
    """Approve or reject a pending interrupt; a question can only be declined here."""
    approved = request.approved
    return _resolve(
        schema,
        context,
        request.interrupt_id,
        accepts=lambda interrupt: not (interrupt.kind is InterruptKind.QUESTION and approved),
        resolution=AgentInterruptResolution(
            approved=approved,
            rejection_message=None if approved else request.rejection_message,
            answer=None,
        ),
    )


def answer_question(
    schema: SessionSchema, context: Context, request: AnswerQuestionRequest
) -> bool:
    """Answer a pending question: not blank, and one of its choices unless free text is allowed."""
    answer = request.answer
    if not isinstance(answer, str) or not answer.strip():
        return False
    return _resolve(
        schema,
        context,
        request.interrupt_id,
        accepts=lambda interrupt: (
            interrupt.kind is InterruptKind.QUESTION
            and (interrupt.allows_free_text or answer in interrupt.choices)
        ),
        resolution=AgentInterruptResolution(approved=True, rejection_message=None, answer=answer),
    )


def _resolve(
    schema: SessionSchema,
    context: Context,
    interrupt_id: object,
    *,
    accepts: Callable[[AgentInterrupt], bool],
    resolution: AgentInterruptResolution,
) -> bool:
    if not isinstance(interrupt_id, str) or not interrupt_id or "/" in interrupt_id:
        return False
    store = InterruptStore(schema)
    interrupt = store.find(context, interrupt_id)
    if interrupt is None:
        return False
    deadline = utc_from(interrupt.deadline)
    if deadline is not None and utc_now() >= deadline:
        return False
    if not accepts(interrupt):
        return False
    store.remove(context, interrupt_id)
    schema.interrupt_resolutions.publish(context, interrupt_id, resolution)
    return True
