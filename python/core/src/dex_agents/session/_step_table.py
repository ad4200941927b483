"""The Step table: how one Step family names another family's Steps without importing it.

Step families hand over to each other (RunModel to the tool Steps, a tool Step
to AwaitQuestionAnswer, AwaitQuestionAnswer back to the tool Steps), so their
modules would import each other in a circle. Instead `_flow` fills one
`SessionSteps` with every Step class and hands it to the runtime; a Step that
moves to another family reads the target from `runtime.steps`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from dex import Step
from dex_agents_contracts import AgentSessionStartInput, CompactContextInput, ToolEffect

__all__ = ["SessionSteps", "retried"]


def retried(effect: ToolEffect) -> bool:
    """Read and idempotent_write calls may run again; the others run at most once."""
    return effect in (ToolEffect.READ, ToolEffect.IDEMPOTENT_WRITE)


@dataclass(frozen=True)
class SessionSteps:
    """Every Step class of the session Flow, in registration order after the start Step."""

    start: type[Step[AgentSessionStartInput]]
    await_user_message: type[Step[None]]
    run_model: type[Step[CompactContextInput | None]]
    compact_context: type[Step[CompactContextInput | None]]
    resume_turn: type[Step[int]]
    record_turn_failure: type[Step[CompactContextInput | None]]
    await_tool_approval: type[Step[str]]
    call_tool: type[Step[str]]
    call_single_attempt_tool: type[Step[str]]
    record_tool_failure: type[Step[str]]
    record_tool_outcome_unknown: type[Step[str]]
    apply_turn_control: type[Step[None]]
    finish_turn_cancellation: type[Step[str]]
    await_question_answer: type[Step[str]]
    await_timer: type[Step[str]]
    poll_tool_task: type[Step[str]]
    cancel_tool_task: type[Step[str]]

    def others(self) -> tuple[type[Step[Any]], ...]:
        """Every Step class but the start Step, in registration order."""
        return tuple(getattr(self, field.name) for field in fields(self) if field.name != "start")

    def tool_step_for(self, effect: ToolEffect) -> type[Step[str]]:
        """CallTool for read and idempotent_write, CallSingleAttemptTool otherwise."""
        return self.call_tool if retried(effect) else self.call_single_attempt_tool

    def failure_route_for(self, effect: ToolEffect) -> type[Step[str]]:
        """Where a tool Step or a task's poll goes once its attempts ran out."""
        return self.record_tool_failure if retried(effect) else self.record_tool_outcome_unknown

    def cancelled_by_cancel_turn(self) -> tuple[type[Step[Any]], ...]:
        """What cancel_turn cancels: model calls, compaction, the failure route, waits, polls."""
        return (
            self.run_model,
            self.compact_context,
            self.record_turn_failure,
            self.await_tool_approval,
            self.await_question_answer,
            self.await_timer,
            self.poll_tool_task,
        )
