/**
 * The runner interface's plain data to and from the runner service's wire
 * messages (runner.proto). The one place that maps them.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  AgentUsageSchema,
  InteractionMode,
  MessageRole,
  RunnerDeferredToolCallSchema,
  RunnerFrameworkMessageSchema,
  RunnerModelCallMetadataSchema,
  type AgentUsage,
  type RunnerDeferredToolCall,
  type RunnerFrameworkMessage,
  type RunnerModelCallMetadata,
  type RunnerTurnContext,
} from "@dex-agents/contracts";
import { resolveToolPolicy } from "./policies.js";
import type {
  AgentTurnContext,
  DeferredToolCall,
  EventWriter,
  FrameworkMessage,
  ModelCallMetadata,
  ToolPolicy,
  Usage,
} from "./runner.js";

const ROLES = {
  user: MessageRole.USER,
  assistant: MessageRole.ASSISTANT,
  tool: MessageRole.TOOL,
} as const;

/** The callbacks a call's host adds to the wire context. */
export interface CallCallbacks {
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  readonly cancellationSignal: AbortSignal;
}

export function wireFrameworkMessage(message: FrameworkMessage): RunnerFrameworkMessage {
  const role = ROLES[message.role];
  if (role === undefined) {
    throw new TypeError(`a framework message has role ${JSON.stringify(message.role)}; expected user, assistant or tool`);
  }
  if (typeof message.frameworkItem !== "string") {
    throw new TypeError("a framework message needs its frameworkItem as JSON text");
  }
  return create(RunnerFrameworkMessageSchema, {
    role,
    frameworkItem: message.frameworkItem,
    text: message.text,
    toolCallId: message.toolCallId,
    toolName: message.toolName,
    toolArguments: message.toolArguments,
    toolOutput: message.toolOutput,
  });
}

export function wireFrameworkMessages(
  messages: readonly FrameworkMessage[] | undefined,
): RunnerFrameworkMessage[] {
  return (messages ?? []).map(wireFrameworkMessage);
}

export function wireUsage(usage: Usage | undefined): AgentUsage {
  return create(AgentUsageSchema, {
    modelCalls: BigInt(usage?.modelCalls ?? 0),
    inputTokens: BigInt(usage?.inputTokens ?? 0),
    outputTokens: BigInt(usage?.outputTokens ?? 0),
    cachedInputTokens: BigInt(usage?.cachedInputTokens ?? 0),
    reasoningTokens: BigInt(usage?.reasoningTokens ?? 0),
  });
}

export function wireMetadata(
  metadata: ModelCallMetadata | undefined,
): RunnerModelCallMetadata | undefined {
  if (metadata === undefined) return undefined;
  return create(RunnerModelCallMetadataSchema, {
    requestModel: metadata.requestModel,
    responseModel: metadata.responseModel,
    providerName: metadata.providerName,
    responseId: metadata.responseId,
    finishReasons: [...(metadata.finishReasons ?? [])],
  });
}

export function wireToolCalls(calls: readonly DeferredToolCall[]): RunnerDeferredToolCall[] {
  return calls.map((call) =>
    create(RunnerDeferredToolCallSchema, {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      arguments: call.arguments,
      effect: call.policy.effect,
      requiresApproval: call.policy.requiresApproval,
      toolSourceReference: call.toolSourceReference,
    }),
  );
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
