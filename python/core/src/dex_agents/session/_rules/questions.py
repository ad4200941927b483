"""Question interrupts: their IDs, how one is built, and ask_user's raise in RunModel.

AwaitQuestionAnswer, FinishTurnCancellation and RunModel's built-in routing
all name a call's question interrupt the same way, so the rule lives here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dex import Context, StepMovement
from dex_agents_contracts import AgentInterrupt, AgentToolCall, InterruptKind, ToolCallStatus

from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._stores.interrupts import interrupt_raised, new_interrupt

__all__ = [
    "interrupt_id_collision_error",
    "is_ask_user",
    "question_interrupt",
    "question_interrupt_id",
    "raise_ask_user",
]


def interrupt_id_collision_error(interrupt_id: str) -> str:
    return (
        f"the tool's question cannot use interrupt ID {interrupt_id}, "
        "which another tool call of this turn uses"
    )


def is_ask_user(runtime: SessionRuntime, record: AgentToolCall) -> bool:
    # An enabled built-in name is reserved, so such a record is ask_user's own.
    return record.tool_name == "ask_user" and "ask_user" in runtime.options.built_in_tools


def question_interrupt_id(runtime: SessionRuntime, record: AgentToolCall) -> str:
    """ask_user's interrupt is its call ID; a tool's n-th question is `<id>-input-<n>`."""
    if is_ask_user(runtime, record):
        return record.tool_call_id
    return f"{record.tool_call_id}-input-{len(record.input_answers) + 1}"


def question_interrupt(
    runtime: SessionRuntime,
    record: AgentToolCall,
    interrupt_id: str,
    now: datetime,
) -> AgentInterrupt:
    """The interrupt of the record's current question."""
    return new_interrupt(
        record,
        InterruptKind.QUESTION,
        interrupt_id,
        now=now,
        deadline_after=runtime.options.interrupt_deadline,
    )


def raise_ask_user(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    *,
    question: str,
    choices: Sequence[str],
    allows_free_text: bool,
    raised: list[AgentInterrupt],
    events: StepEventWriter,
    now: datetime,
) -> StepMovement[str]:
    """RunModel's ask_user call: awaiting_answer with its question interrupt.

    Appends the interrupt to `raised`, which RunModel stores once for the whole
    response.
    """
    record.status = ToolCallStatus.AWAITING_ANSWER
    record.input_question = question
    record.input_choices = list(choices)
    record.input_allows_free_text = allows_free_text
    interrupt = question_interrupt(runtime, record, record.tool_call_id, now)
    raised.append(interrupt)
    events.write(interrupt_raised(interrupt))
    runtime.schema.tool_calls.set(context, record.tool_call_id, record)
    return StepMovement.of(runtime.steps.await_question_answer, record.tool_call_id)
