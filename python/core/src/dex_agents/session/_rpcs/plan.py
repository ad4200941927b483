"""The rule of execute_plan: which approval of a plan revision it accepts.

execute_plan records the accepted revision in PendingPlanExecution under its
lock and publishes it to PlanExecutions; AwaitUserMessage consumes it. Between
the two, the pending record refuses a second approval of the same revision.
"""

from __future__ import annotations

from dex import Context
from dex_agents_contracts import AgentStatus, ExecutePlanRequest, PlanExecutionRequest

from dex_agents.session._rules.plan_mode import is_executable
from dex_agents.session._schema import SessionSchema
from dex_agents.session._stores.interrupts import InterruptStore

__all__ = ["accept_plan_execution"]


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
    if not is_executable(schema.plan.get(context), revision):
        return False
    pending = schema.pending_plan_execution.get(context)
    if pending is not None and pending.revision == revision:
        return False  # accepted already; AwaitUserMessage has not consumed it yet
    if (
        schema.queued_user_messages.size(context) > 0
        or schema.steered_user_messages.size(context) > 0
        or InterruptStore(schema).pending(context)
    ):
        return False
    accepted = PlanExecutionRequest(revision=revision)
    schema.pending_plan_execution.set(context, accepted)
    schema.plan_executions.publish(context, str(revision), accepted)
    return True
