/**
 * A RunModel Step's turn context without a session, for unit tests that call
 * `runModelStep` directly: session `s1`, `turn-1`, attempt 1, chat mode unless
 * told, no session policies, every event written to `events`.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  InteractionMode,
  MessageRole,
  ToolEffect,
  type AgentEventPayload,
  type AgentMessage,
  type AgentPlan,
  type AgentToolCall,
} from "@dex-agents/contracts";
import { resolveToolPolicy } from "../policies.js";
import type { AgentTurnContext } from "../runner.js";

export interface TestTurnOptions {
  /** The stored messages; `storedUserMessage(prompt, item)` makes the usual first one. */
  readonly messages: readonly AgentMessage[];
  readonly frameworkRunState?: string | undefined;
  readonly toolCalls?: readonly AgentToolCall[];
  /** Where the turn's events go (an array, usually). */
  readonly events?: { push(event: AgentEventPayload): unknown };
  /** Where raw events go; dropped when absent. */
  readonly writeRaw?: (eventType: string, payload: string) => void;
  readonly signal?: AbortSignal;
  readonly interactionMode?: InteractionMode;
  readonly plan?: AgentPlan;
  readonly enabledBuiltInTools?: readonly string[];
  /** `turn-1` unless told (a test that runs several turns). */
  readonly turnId?: string;
}

/** The turn's user message as the session stores it, with the runner's `frameworkItem`. */
export function storedUserMessage(text: string, frameworkItem: string): AgentMessage {
  return create(AgentMessageSchema, { sequence: 1n, turnId: "turn-1", role: MessageRole.USER, text, frameworkItem });
}

export function testTurn(options: TestTurnOptions): AgentTurnContext {
  const toolPolicies = new Map();
  const events = options.events ?? ([] as AgentEventPayload[]);
  return {
    flowId: "s1",
    turnId: options.turnId ?? "turn-1",
    attempt: 1,
    messages: options.messages,
    frameworkRunState: options.frameworkRunState,
    toolCalls: options.toolCalls ?? [],
    toolPolicies,
    defaultToolEffect: ToolEffect.UNCLASSIFIED,
    enabledBuiltInTools: options.enabledBuiltInTools ?? [],
    sessionSettings: {},
    interactionMode: options.interactionMode ?? InteractionMode.CHAT,
    plan: options.plan,
    contextSummary: undefined,
    events: { write: (e) => void events.push(e), writeRaw: options.writeRaw ?? (() => {}) },
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
