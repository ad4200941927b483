/**
 * The plan note a plan-mode runner shows the model before the turn's
 * messages; the texts are the design document's.
 *
 * @module
 */

import { InteractionMode, PlanStatus, PlanTaskStatus, type AgentPlan } from "@dex-agents/contracts";

const PLANNING_LINE =
  "This turn only plans: write or revise the plan with write_todos, and do not do or " +
  "claim any of its tasks. The user reviews the plan before it runs.";

/** The note's text, or undefined; a missing or cleared plan shows only in a planning turn. */
export function buildPlanNote(plan: AgentPlan | undefined, mode: InteractionMode): string | undefined {
  const planning = mode === InteractionMode.PLANNING;
  if (plan === undefined || plan.status === PlanStatus.CLEARED) {
    return planning ? `[Dex] There is no plan yet.\n${PLANNING_LINE}` : undefined;
  }
  const lines = [`[Dex] The current plan, revision ${plan.revision}, is ${PlanStatus[plan.status].toLowerCase()}:`];
  for (const task of plan.tasks) lines.push(`- [${PlanTaskStatus[task.status].toLowerCase()}] ${task.content}`);
  if (planning) lines.push(PLANNING_LINE);
  return lines.join("\n");
}
