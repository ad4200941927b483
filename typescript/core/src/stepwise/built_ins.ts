/**
 * The model-facing definitions of the session's built-in tools, the same as
 * `dex_agents._runner.built_ins`: the session runs these calls itself, a
 * runner only offers the enabled ones to its model.
 *
 * @module
 */

import { ToolEffect } from "@dex-agents/contracts";
import type { ResolvedToolPolicy } from "../runner.js";
import type { ToolSpec } from "./model.js";

export const BUILT_IN_TOOL_POLICY: ResolvedToolPolicy = { effect: ToolEffect.READ, requiresApproval: false };

export const BUILT_IN_TOOL_SPECS: Readonly<Record<string, ToolSpec>> = {
  ask_user: {
    name: "ask_user",
    description:
      "Ask the user a question and wait for the answer. Use it when you cannot " +
      "continue without information only the user has.",
    parameters: {
      type: "object",
      properties: {
        question: { type: "string", description: "The question to ask." },
        choices: {
          type: ["array", "null"],
          items: { type: "string" },
          description: "Answers the user may pick from; omit for a free answer.",
        },
        allows_free_text: {
          type: ["boolean", "null"],
          description: "Whether the user may answer outside `choices` (default true).",
        },
      },
      required: ["question"],
      additionalProperties: false,
    },
  },
  durable_wait: {
    name: "durable_wait",
    description: "Wait for a number of seconds before continuing; the wait survives restarts.",
    parameters: {
      type: "object",
      properties: {
        seconds: { type: "integer", minimum: 1, description: "How long to wait." },
        reason: { type: "string", description: "Why the wait is needed." },
      },
      required: ["seconds", "reason"],
      additionalProperties: false,
    },
  },
  write_todos: {
    name: "write_todos",
    description:
      "Replace the plan with this task list. Keep each task's status current; " +
      "an empty list clears the plan.",
    parameters: {
      type: "object",
      properties: {
        todos: {
          type: "array",
          items: {
            type: "object",
            properties: {
              content: { type: "string" },
              status: { type: "string", enum: ["pending", "in_progress", "completed"] },
            },
            required: ["content", "status"],
            additionalProperties: false,
          },
        },
      },
      required: ["todos"],
      additionalProperties: false,
    },
  },
};

/**
 * The specs of the session's enabled built-ins, for a runner to offer its model
 * next to its own tools. A tool of the runner's (`ownNames`) under an enabled
 * built-in's name is an error: the session reserves those names.
 */
export function offeredBuiltIns(enabled: readonly string[], ownNames: Iterable<string>): ToolSpec[] {
  for (const name of ownNames) {
    if (enabled.includes(name)) throw new Error(`tool '${name}' uses the name of an enabled built-in tool, which the session reserves`);
  }
  return enabled.flatMap((name) => {
    const spec = BUILT_IN_TOOL_SPECS[name];
    return spec === undefined ? [] : [spec];
  });
}
