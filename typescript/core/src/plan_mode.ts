/**
 * Plan mode for any runner (the Python kit's `dex_agents._runner.plan_mode`):
 * the plan note before the turn's messages, and write_todos alone in a
 * planning turn. The session decides the turn's mode and keeps the plan; an
 * adapter that declares plan_mode maps these two onto its framework.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { AgentMessageSchema, InteractionMode, PlanStatus, PlanTaskStatus, type AgentMessage, type AgentPlan } from "@dex-agents/contracts";
import type { AgentTurnContext, FrameworkMessage } from "./runner.js";
import { offeredBuiltIns } from "./stepwise/built_ins.js";
import type { ToolSpec } from "./stepwise/model.js";

const PLANNING_LINE =
  "This turn only plans: write or revise the plan with write_todos, and do not do or " +
  "claim any of its tasks. The user reviews the plan before it runs.";
const WRITE_TODOS = "write_todos";

/** The plan note's `sequence`: it is shown to the model, never stored. */
export const PLAN_NOTE_SEQUENCE = -1n;

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

/** A planning turn: the model may only write the plan, so the agent's own tools are hidden. */
export function isPlanning(turn: Pick<AgentTurnContext, "interactionMode">): boolean {
  return turn.interactionMode === InteractionMode.PLANNING;
}

/**
 * The specs of the built-ins to offer: the enabled ones, or write_todos alone in a
 * planning turn. A runner's own tool (`ownNames`) under any enabled built-in's name
 * is refused in every turn (`offeredBuiltIns`).
 */
export function turnBuiltIns(
  turn: Pick<AgentTurnContext, "interactionMode" | "enabledBuiltInTools">,
  ownNames: Iterable<string>,
): ToolSpec[] {
  const specs = offeredBuiltIns(turn.enabledBuiltInTools, ownNames);
  return isPlanning(turn) ? specs.filter((spec) => spec.name === WRITE_TODOS) : specs;
}

/**
 * The turn's stored messages with the plan note (when there is one) before the
 * first message of the current turn, built as the runner builds a user message.
 */
export function withPlanNote(
  turn: Pick<AgentTurnContext, "messages" | "plan" | "interactionMode" | "turnId">,
  buildUserMessage: (text: string) => FrameworkMessage,
): AgentMessage[] {
  const messages = [...turn.messages];
  const note = buildPlanNote(turn.plan, turn.interactionMode);
  if (note === undefined) return messages;
  const at = messages.findIndex((m) => m.turnId === turn.turnId);
  const index = at === -1 ? messages.length : at;
  const built = buildUserMessage(note);
  messages.splice(
    index,
    0,
    create(AgentMessageSchema, {
      sequence: PLAN_NOTE_SEQUENCE,
      turnId: turn.turnId,
      role: built.role,
      frameworkItem: built.frameworkItem,
      ...(built.text !== undefined ? { text: built.text } : {}),
      ...(messages[index]?.createdAt !== undefined ? { createdAt: messages[index]!.createdAt! } : {}),
    }),
  );
  return messages;
}
