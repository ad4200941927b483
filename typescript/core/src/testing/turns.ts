/**
 * A RunModel Step's context as the session hands it to a runner, for unit tests
 * that call `runModelStep` without a session.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  InteractionMode,
  MessageRole,
  ToolEffect,
  type AgentMessage,
  type AgentToolCall,
} from "@dex-agents/contracts";

import { resolveToolPolicy } from "../policies.js";
import type { AgentTurnContext, EventWriter } from "../runner.js";

/** What a test sets; the rest is a chat-mode attempt 1 of `turn-1` in session `s1`. */
export interface TurnContextOptions {
  readonly messages: readonly AgentMessage[];
  readonly frameworkRunState?: string | undefined;
  readonly toolCalls?: readonly AgentToolCall[];
  readonly events?: EventWriter;
  readonly signal?: AbortSignal;
  readonly flowId?: string;
  readonly turnId?: string;
}

/** The context with no session policies, so the framework's declared effects decide. */
export function turnContext(options: TurnContextOptions): AgentTurnContext {
  const toolPolicies = new Map();
  return {
    flowId: options.flowId ?? "s1",
    turnId: options.turnId ?? "turn-1",
    attempt: 1,
    messages: options.messages,
    frameworkRunState: options.frameworkRunState,
    toolCalls: options.toolCalls ?? [],
    toolPolicies,
    defaultToolEffect: ToolEffect.UNCLASSIFIED,
    enabledBuiltInTools: [],
    sessionSettings: {},
    interactionMode: InteractionMode.CHAT,
    plan: undefined,
    contextSummary: undefined,
    events: options.events ?? { write: () => {}, writeRaw: () => {} },
    heartbeat: async () => {},
    cancellationSignal: options.signal ?? new AbortController().signal,
    resolveToolPolicy: (name, effect, approval) =>
      resolveToolPolicy(name, {
        toolPolicies,
        defaultEffect: ToolEffect.UNCLASSIFIED,
        frameworkEffect: effect,
        frameworkRequiresApproval: approval,
      }),
  };
}

/** The user message that opens `turn-1`, stored with the runner's framework item. */
export function storedUserMessage(text: string, frameworkItem: string): AgentMessage {
  return create(AgentMessageSchema, {
    sequence: 1n,
    turnId: "turn-1",
    role: MessageRole.USER,
    text,
    frameworkItem,
  });
}
