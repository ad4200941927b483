/**
 * Scripted AI SDK language models for tests, without a dependency on `ai`:
 * what a `MockLanguageModelV4` `doStream` or `doGenerate` returns for a text
 * and tool calls, and a scripted model (`ConformanceScript.answer`) as such a `doStream`. The
 * shapes are the AI SDK's provider types (`LanguageModelV4StreamPart`,
 * `LanguageModelV4Prompt`), written out so the mock accepts them.
 *
 * @module
 */

import type { ScriptedAnswer, ScriptedModelCall, ScriptedToolCall } from "./conformance.js";

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

function finishReason(calls: readonly ScriptedToolCall[]) {
  return { unified: calls.length > 0 ? ("tool-calls" as const) : ("stop" as const), raw: undefined };
}

/** A `doGenerate` result: the text, then the calls, with the finish reason they make. */
export function aiSdkGenerateResponse(text: string | undefined, calls: readonly ScriptedToolCall[] = []) {
  return {
    content: [
      ...(text === undefined ? [] : [{ type: "text" as const, text }]),
      ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
    ],
    finishReason: finishReason(calls),
    usage: USAGE,
    warnings: [],
  };
}

/**
 * A `doStream` result: the reasoning and then the text, each as one delta, then
 * the calls, then the finish with its reason.
 */
export function aiSdkStreamResponse(text: string | undefined, calls: readonly ScriptedToolCall[] = [], reasoning?: string) {
  const parts = [
    { type: "stream-start" as const, warnings: [] },
    ...(reasoning === undefined
      ? []
      : [
          { type: "reasoning-start" as const, id: "r" },
          { type: "reasoning-delta" as const, id: "r", delta: reasoning },
          { type: "reasoning-end" as const, id: "r" },
        ]),
    ...(text === undefined
      ? []
      : [
          { type: "text-start" as const, id: "t" },
          { type: "text-delta" as const, id: "t", delta: text },
          { type: "text-end" as const, id: "t" },
        ]),
    ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
    { type: "finish" as const, finishReason: finishReason(calls), usage: USAGE },
  ];
  return {
    stream: new ReadableStream<(typeof parts)[number]>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

/** The parts of an AI SDK prompt message that a scripted model reads. */
interface PromptPart {
  readonly type: string;
  readonly text?: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly output?: { readonly type: string; readonly value?: unknown };
}

export interface AiSdkPromptMessage {
  readonly role: string;
  readonly content: string | readonly PromptPart[];
}

function partsOf(message: AiSdkPromptMessage): readonly PromptPart[] {
  return typeof message.content === "string" ? [] : message.content;
}

/** The user prompts, oldest first. */
export function aiSdkUserPrompts(prompt: readonly AiSdkPromptMessage[]): string[] {
  return prompt
    .filter((m) => m.role === "user")
    .map((m) => partsOf(m).map((p) => (p.type === "text" ? (p.text ?? "") : "")).join(""));
}

/**
 * `reply` as a `doStream`: the prompt read as a `ScriptedModelCall` (its trailing
 * tool message the results), the answer streamed back; a structured output is
 * the answer's JSON text, as the AI SDK's `Output.object` wants it.
 */
export function aiSdkDoStream(reply: (call: ScriptedModelCall) => Promise<ScriptedAnswer>) {
  return async (options: {
    readonly prompt: readonly AiSdkPromptMessage[];
    readonly abortSignal?: AbortSignal | undefined;
    readonly tools?: readonly { readonly name: string }[] | undefined;
  }) => {
    const last = options.prompt.at(-1);
    const results =
      last?.role === "tool"
        ? partsOf(last).flatMap((p) =>
            p.type === "tool-result"
              ? [
                  {
                    toolCallId: p.toolCallId ?? "",
                    toolName: p.toolName ?? "",
                    output: p.output?.type === "text" ? String(p.output.value) : JSON.stringify(p.output),
                  },
                ]
              : [],
          )
        : [];
    const answer = await reply({
      prompts: aiSdkUserPrompts(options.prompt),
      results,
      messageCount: options.prompt.filter((m) => m.role !== "system").length,
      signal: options.abortSignal,
      tools: (options.tools ?? []).map((t) => t.name),
    });
    return aiSdkStreamResponse(answer.output !== undefined ? JSON.stringify(answer.output) : answer.text, answer.calls, answer.reasoning);
  };
}
