/**
 * `PiModelClient`: a pi-ai `Model` as the Stepwise loop's `ModelClient`. One
 * `complete` is one pi-ai `stream` call; its text and thinking deltas stream
 * as events, and an `error` or `aborted` stop fails the RunModel attempt,
 * whose retry policy (not pi-ai's) retries.
 *
 * @module
 */

import type { ModelClient, ModelMessage, ModelRequest, ModelResponse } from "@dex-agents/core";
import {
  stream,
  type Api,
  type AssistantMessage,
  type Context,
  type Message,
  type Model,
  type ProviderStreamOptions,
  type TSchema,
} from "@mariozechner/pi-ai";

export interface PiModelClientOptions {
  /** Options of every `stream` call (apiKey, temperature, maxTokens, ...). */
  readonly streamOptions?: ProviderStreamOptions;
}

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** A stored call's arguments as pi-ai's object; text that is no JSON object (another runner's) replays as `{}`. */
function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  return {};
}

/** The Stepwise messages as pi-ai messages; replayed assistant turns carry this model's identity. */
export function piMessages(messages: readonly ModelMessage[], model: Model<Api>, now: number): Message[] {
  return messages.map((m): Message => {
    if (m.role === "user") return { role: "user", content: m.text, timestamp: now };
    if (m.role === "tool") {
      return {
        role: "toolResult",
        toolCallId: m.toolCallId,
        toolName: m.toolName,
        content: [{ type: "text", text: m.output }],
        isError: false,
        timestamp: now,
      };
    }
    const content: AssistantMessage["content"] = [];
    if (m.reasoning) content.push({ type: "thinking", thinking: m.reasoning });
    if (m.text) content.push({ type: "text", text: m.text });
    for (const call of m.toolCalls) {
      content.push({ type: "toolCall", id: call.toolCallId, name: call.toolName, arguments: argumentsObject(call.arguments) });
    }
    return {
      role: "assistant",
      content,
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: NO_USAGE,
      stopReason: m.toolCalls.length > 0 ? "toolUse" : "stop",
      timestamp: now,
    };
  });
}

export class PiModelClient implements ModelClient {
  constructor(
    readonly model: Model<Api>,
    readonly options: PiModelClientOptions = {},
  ) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const context: Context = {
      ...(request.instructions !== undefined ? { systemPrompt: request.instructions } : {}),
      messages: piMessages(request.messages, this.model, Date.now()),
      // The spec's parameters are the tool's own TypeBox schema, passed through unchanged.
      tools: request.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters as TSchema })),
    };
    const events = stream(this.model, context, { maxRetries: 0, ...this.options.streamOptions, signal: request.signal });
    for await (const event of events) {
      if (event.type === "text_delta") request.onDelta({ kind: "text", text: event.delta });
      else if (event.type === "thinking_delta") request.onDelta({ kind: "reasoning", text: event.delta });
    }
    const message = await events.result();
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      if (request.signal.aborted) throw request.signal.reason instanceof Error ? request.signal.reason : new Error("the model call was aborted");
      throw new Error(`pi-ai model call failed (${message.stopReason}): ${message.errorMessage ?? "no message"}`);
    }
    const text = message.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("");
    const reasoning = message.content.flatMap((c) => (c.type === "thinking" ? [c.thinking] : [])).join("");
    return {
      text: text === "" ? undefined : text,
      reasoning: reasoning === "" ? undefined : reasoning,
      toolCalls: message.content.flatMap((c) =>
        c.type === "toolCall" ? [{ toolCallId: c.id, toolName: c.name, arguments: JSON.stringify(c.arguments ?? {}) }] : [],
      ),
      usage: {
        inputTokens: message.usage.input + message.usage.cacheRead,
        outputTokens: message.usage.output,
        cachedInputTokens: message.usage.cacheRead,
      },
      metadata: {
        requestModel: this.model.id,
        responseModel: message.responseModel ?? message.model,
        providerName: message.provider,
        responseId: message.responseId,
        finishReasons: [message.stopReason],
      },
    };
  }

  /** pi-ai's `stream` has no provider-neutral tool choice. */
  supportsForcedToolChoice(): boolean {
    return false;
  }
}
