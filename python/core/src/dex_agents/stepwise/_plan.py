"""The plan note a plan-mode runner shows the model before the turn's messages."""

from __future__ import annotations

from dex_agents_contracts import AgentPlan, InteractionMode, PlanStatus

__all__ = ["build_plan_note"]

_PLANNING_LINE = (
    "This turn only plans: write or revise the plan with write_todos, and do not do or "
    "claim any of its tasks. The user reviews the plan before it runs."
)


def build_plan_note(plan: AgentPlan | None, interaction_mode: InteractionMode) -> str | None:
    """The note's text, or None when there is nothing to show.

    A missing or cleared plan shows only in a planning turn.
    """
    planning = interaction_mode == InteractionMode.PLANNING
    if plan is None or plan.status == PlanStatus.CLEARED:
        return f"[Dex] There is no plan yet.\n{_PLANNING_LINE}" if planning else None
    lines = [f"[Dex] The current plan, revision {plan.revision}, is {plan.status.name.lower()}:"]
    lines.extend(f"- [{task.status.name.lower()}] {task.content}" for task in plan.tasks)
    if planning:
        lines.append(_PLANNING_LINE)
    return "\n".join(lines)
