/**
 * The runner's turn context from the runner service's wire turn
 * (runner.proto), with the host's callbacks: the one value of the seam that
 * is not a generated message, since it carries them.
 *
 * @module
 */

import { InteractionMode, type RunnerTurnContext } from "@dex-agents/contracts";
import { resolveToolPolicy } from "./policies.js";
import type { AgentTurnContext, EventWriter, ToolPolicy } from "./runner.js";

/** The callbacks a call's host adds to the wire context. */
export interface CallCallbacks {
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  readonly cancellationSignal: AbortSignal;
}

/** The runner's view of a wire turn, with the host's callbacks. */
export function turnContext(wire: RunnerTurnContext, callbacks: CallCallbacks): AgentTurnContext {
  const toolPolicies = new Map<string, ToolPolicy>(
    wire.toolPolicies.map((p) => [p.toolName, { effect: p.effect, requiresApproval: p.requiresApproval }]),
  );
  return {
    flowId: wire.flowId,
    turnId: wire.turnId,
    attempt: wire.attempt,
    messages: wire.messages,
    frameworkRunState: wire.frameworkRunState,
    toolCalls: wire.toolCalls,
    toolPolicies,
    defaultToolEffect: wire.defaultToolEffect,
    enabledBuiltInTools: wire.enabledBuiltInTools,
    sessionSettings: wire.sessionSettings ?? {},
    interactionMode: wire.interactionMode === InteractionMode.UNSPECIFIED ? InteractionMode.CHAT : wire.interactionMode,
    plan: wire.plan,
    contextSummary: wire.contextSummary,
    events: callbacks.events,
    heartbeat: () => callbacks.heartbeat(),
    cancellationSignal: callbacks.cancellationSignal,
    resolveToolPolicy: (toolName, frameworkEffect, frameworkRequiresApproval) =>
      resolveToolPolicy(toolName, {
        toolPolicies,
        defaultEffect: wire.defaultToolEffect,
        frameworkEffect,
        frameworkRequiresApproval,
      }),
  };
}
