"""Plan approval in AwaitUserMessage: its wait condition and the executing turn's start.

execute_plan (in `_rpcs.plan`) records the accepted revision; AwaitUserMessage
consumes it here and starts the executing turn while the plan still has it.
"""

from __future__ import annotations

from dex import AsyncContext, Context
from dex.condition import Condition
from dex_agents_contracts import (
    AgentPlan,
    AgentState,
    PlanExecutionRequest,
    PlanStatus,
    PlanUpdatedPayload,
)

from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import SessionSchema
from dex_agents.session._time import utc_now

__all__ = [
    "is_executable",
    "plan_approval_text",
    "plan_execution_condition",
    "start_plan_execution",
]

_EXECUTABLE = (PlanStatus.DRAFT, PlanStatus.ACTIVE)


def plan_approval_text(revision: int) -> str:
    """The user message an executing turn starts with."""
    return (
        f"[Dex] The user approved plan revision {revision}. Execute it and keep the task "
        "statuses current with write_todos."
    )


def is_executable(plan: AgentPlan | None, revision: int) -> bool:
    return plan is not None and plan.revision == revision and plan.status in _EXECUTABLE


def plan_execution_condition(schema: SessionSchema, context: Context) -> Condition | None:
    """AwaitUserMessage's approval condition, while the plan can still be approved."""
    plan = schema.plan.get(context)
    if plan is None or plan.status not in _EXECUTABLE:
        return None
    return schema.plan_executions.for_one(str(plan.revision))


async def start_plan_execution(
    runtime: SessionRuntime,
    context: AsyncContext,
    state: AgentState,
    approval: PlanExecutionRequest,
) -> bool:
    """Consume an approval: start the executing turn when the plan still has that revision.

    False when nothing started (a stale approval, or a message too large to store).
    """
    schema = runtime.schema
    schema.pending_plan_execution.delete(context)
    plan = schema.plan.get(context)
    if plan is None or not is_executable(plan, approval.revision):
        return False
    if plan.status is PlanStatus.DRAFT:
        plan.status = PlanStatus.ACTIVE
        plan.updated_at = utc_now()
        schema.plan.set(context, plan)
        with runtime.writer(context, None) as events:
            events.write(
                PlanUpdatedPayload(
                    revision=plan.revision, status=plan.status, task_count=len(plan.tasks)
                )
            )
    return await runtime.begin_executing_turn(
        context, state, plan_approval_text(plan.revision), plan.revision
    )
