"""Plan approval: what execute_plan accepts, and how AwaitUserMessage starts an executing turn.

execute_plan records the accepted revision in PendingPlanExecution under its
lock and publishes it to PlanExecutions; AwaitUserMessage consumes it. Between
the two, the pending record refuses a second approval of the same revision.
"""

from __future__ import annotations

from dex import AsyncContext, Context
from dex.condition import Condition
from dex_agents_contracts import (
    AgentPlan,
    AgentState,
    AgentStatus,
    ExecutePlanRequest,
    PlanExecutionRequest,
    PlanStatus,
    PlanUpdatedPayload,
)

from dex_agents._runtime import SessionRuntime
from dex_agents._schema import SessionSchema
from dex_agents._time import utc_now

__all__ = [
    "accept_plan_execution",
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


def _executable(plan: AgentPlan | None, revision: int) -> bool:
    return plan is not None and plan.revision == revision and plan.status in _EXECUTABLE


def plan_execution_condition(schema: SessionSchema, context: Context) -> Condition | None:
    """AwaitUserMessage's approval condition, while the plan can still be approved."""
    plan = schema.plan.get(context)
    if plan is None or plan.status not in _EXECUTABLE:
        return None
    return schema.plan_executions.for_one(str(plan.revision))


def accept_plan_execution(
    schema: SessionSchema, context: Context, request: ExecutePlanRequest
) -> bool:
    """execute_plan's rule (the RPC holds the PendingPlanExecution lock)."""
    revision = request.revision
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 1:
        return False
    state = schema.state.get(context)
    if (
        state is None
        or state.active_turn_id is not None
        or state.status is not AgentStatus.WAITING_FOR_USER_MESSAGE
    ):
        return False
    if not _executable(schema.plan.get(context), revision):
        return False
    pending = schema.pending_plan_execution.get(context)
    if pending is not None and pending.revision == revision:
        return False  # accepted already; AwaitUserMessage has not consumed it yet
    if (
        schema.queued_user_messages.size(context) > 0
        or schema.steered_user_messages.size(context) > 0
        or schema.pending_interrupts.get(context)
    ):
        return False
    accepted = PlanExecutionRequest(revision=revision)
    schema.pending_plan_execution.set(context, accepted)
    schema.plan_executions.publish(context, str(revision), accepted)
    return True


def start_plan_execution(
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
    if plan is None or not _executable(plan, approval.revision):
        return False
    if plan.status is PlanStatus.DRAFT:
        plan.status = PlanStatus.ACTIVE
        plan.updated_at = utc_now()
        schema.plan.set(context, plan)
        events = runtime.writer(context, None)
        try:
            events.write(
                PlanUpdatedPayload(
                    revision=plan.revision, status=plan.status, task_count=len(plan.tasks)
                )
            )
        finally:
            events.close()
    return runtime.begin_executing_turn(
        context, state, plan_approval_text(plan.revision), plan.revision
    )
