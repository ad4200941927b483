"""How tool Steps and PollToolTask record what a tool or task returned.

CallTool, CallSingleAttemptTool, PollToolTask and CancelToolTask share these rules, so a
question or a poll interval is recorded the same way whichever Step saw it.
"""

from __future__ import annotations

import math

from dex_agents_contracts import AgentToolCall, ToolCallStatus, ToolEffect

from dex_agents.runner import ToolInputRequested

__all__ = [
    "MAX_POLL_INTERVAL_SECONDS",
    "TASK_ID_BLANK_ERROR",
    "TASK_INTERVAL_NOT_A_NUMBER_ERROR",
    "TASK_POLLING_UNSUPPORTED_ERROR",
    "idempotency_key",
    "poll_interval_seconds",
    "record_question",
    "status_by_effect",
]

MAX_POLL_INTERVAL_SECONDS = 24 * 60 * 60
"""A task is polled at least once a day."""

TASK_POLLING_UNSUPPORTED_ERROR = (
    "dex-agents: the tool started a task, but the runner does not implement poll_tool_task"
)
TASK_ID_BLANK_ERROR = "dex-agents: the tool started a task with a blank task_id"
TASK_INTERVAL_NOT_A_NUMBER_ERROR = (
    "dex-agents: the tool started a task whose poll_interval_seconds is not a number"
)


def idempotency_key(flow_id: str, turn_id: str, tool_call_id: str) -> str:
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt of a tool, poll or cancel."""
    return f"{flow_id}/{turn_id}/{tool_call_id}"


def poll_interval_seconds(value: object) -> int | None:
    """Whole seconds until the next poll, rounded up into 1 s .. 1 day; None for no number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    if value >= MAX_POLL_INTERVAL_SECONDS:
        return MAX_POLL_INTERVAL_SECONDS
    return max(1, math.ceil(value))


def status_by_effect(record: AgentToolCall) -> ToolCallStatus:
    """A call that may have taken effect: failed for a read, outcome_unknown otherwise."""
    if record.effect is ToolEffect.READ:
        return ToolCallStatus.FAILED
    return ToolCallStatus.OUTCOME_UNKNOWN


def record_question(record: AgentToolCall, question: ToolInputRequested) -> None:
    """The record waits for the answer to the tool's question, which AwaitQuestionAnswer raises."""
    record.status = ToolCallStatus.AWAITING_ANSWER
    record.input_continuation = question.continuation
    record.input_question = question.question
    record.input_choices = list(question.choices)
    record.input_allows_free_text = question.allows_free_text
