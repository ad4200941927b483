/**
 * The model client of the Stepwise loop: one model call, provider-neutral.
 * An adapter (e.g. `@dex-agents/pi`) wraps its framework's models as one.
 *
 * @module
 */

import type { ModelCallMetadataInit } from "../values.js";

/** A tool as the model sees it: name, description and JSON schema of the arguments. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** A tool call the model asked for; `arguments` is JSON text. */
export interface ModelToolCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: string;
}

export type ModelMessage =
  | { readonly role: "user"; readonly text: string }
  | {
      readonly role: "assistant";
      readonly text?: string | undefined;
      readonly reasoning?: string | undefined;
      readonly toolCalls: readonly ModelToolCall[];
    }
  | { readonly role: "tool"; readonly toolCallId: string; readonly toolName: string; readonly output: string };

/** `auto`, or one tool the model must call. */
export type ModelToolChoice = "auto" | { readonly name: string };

/** A streamed piece of the response. */
export interface ModelDelta {
  readonly kind: "text" | "reasoning";
  readonly text: string;
}

export interface ModelRequest {
  readonly instructions: string | undefined;
  readonly messages: readonly ModelMessage[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice: ModelToolChoice;
  readonly sessionSettings: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  /**
   * The answer must be the agent's structured output (`AgentDefinition.output`):
   * the client asks its framework for it and reports `output` or `outputError`.
   * Unset for a summary call.
   */
  readonly structuredOutput?: boolean;
  /** Streams deltas as `text_delta` / `reasoning_delta` events. */
  onDelta(delta: ModelDelta): void;
}

export interface ModelUsage {
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cachedInputTokens?: number;
  readonly reasoningTokens?: number;
}

export interface ModelResponse {
  readonly text?: string | undefined;
  readonly reasoning?: string | undefined;
  readonly toolCalls: readonly ModelToolCall[];
  readonly usage?: ModelUsage;
  readonly metadata?: ModelCallMetadataInit | undefined;
  /** With `structuredOutput`: the framework's parsed answer, when it matched the schema. */
  readonly output?: unknown;
  /** With `structuredOutput`: why the framework could not read an answer as the schema. */
  readonly outputError?: string | undefined;
}

/** One model call per `complete`; the RunModel Step retries, so a client does not. */
export interface ModelClient {
  complete(request: ModelRequest): Promise<ModelResponse>;
  /** Whether the client can force a named tool choice (plan mode's `required`). */
  supportsForcedToolChoice?(sessionSettings: Readonly<Record<string, unknown>>): boolean;
}
