/**
 * Tool policies: the session's `ToolPolicy` wins over what the framework
 * declares, then the framework's metadata, then the session default. The
 * same rule as `dex_agents.runner.resolve_tool_policy`.
 *
 * @module
 */

import { ToolEffect } from "@dex-agents/contracts";
import type { ResolvedToolPolicy, ToolPolicy } from "./runner.js";

/** Whether a call needs the user's approval when its policy does not say. */
export const DEFAULT_REQUIRES_APPROVAL: ReadonlyMap<ToolEffect, boolean> = new Map([
  [ToolEffect.READ, false],
  [ToolEffect.IDEMPOTENT_WRITE, false],
  [ToolEffect.NON_IDEMPOTENT_WRITE, true],
  [ToolEffect.UNCLASSIFIED, true],
]);

/** The effect and approval one tool call runs with. */
export function resolveToolPolicy(
  toolName: string,
  options: {
    readonly toolPolicies: ReadonlyMap<string, ToolPolicy>;
    readonly defaultEffect: ToolEffect;
    readonly frameworkEffect?: ToolEffect | undefined;
    readonly frameworkRequiresApproval?: boolean | undefined;
  },
): ResolvedToolPolicy {
  const policy = options.toolPolicies.get(toolName);
  const effect = policy?.effect ?? options.frameworkEffect ?? options.defaultEffect;
  const explicit = policy !== undefined ? policy.requiresApproval : options.frameworkRequiresApproval;
  const fallback = DEFAULT_REQUIRES_APPROVAL.get(effect);
  if (fallback === undefined) {
    throw new RangeError(`tool ${JSON.stringify(toolName)}: ${effect} is not a tool effect`);
  }
  return { effect, requiresApproval: explicit ?? fallback };
}

/**
 * The effect MCP tool annotations imply: readOnlyHint is a read, idempotentHint
 * an idempotent write whatever destructiveHint says; anything else says nothing.
 */
export function toolEffectFromAnnotations(annotations: Readonly<Record<string, unknown>> | undefined): ToolEffect | undefined {
  if (annotations?.["readOnlyHint"] === true) return ToolEffect.READ;
  if (annotations?.["idempotentHint"] === true) return ToolEffect.IDEMPOTENT_WRITE;
  return undefined;
}
