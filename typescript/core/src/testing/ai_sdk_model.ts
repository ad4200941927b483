/**
 * Scripted AI SDK language models for tests, without a dependency on `ai`:
 * what a `MockLanguageModelV4` `doStream` or `doGenerate` returns for a text
 * and tool calls, and the matrix script (`matrixReply`) as such a `doStream`. The
 * shapes are the AI SDK's provider types (`LanguageModelV4StreamPart`,
 * `LanguageModelV4Prompt`), written out so the mock accepts them.
 *
 * @module
 */

import { matrixReply, type MatrixModelCall, type MatrixReply, type MatrixToolCall } from "./matrix_model.js";
import type { MatrixSidecarArgs } from "./matrix_sidecar.js";

const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

function finishReason(calls: readonly MatrixToolCall[]) {
  return { unified: calls.length > 0 ? ("tool-calls" as const) : ("stop" as const), raw: undefined };
}

/** A `doGenerate` result: the text, then the calls, with the finish reason they make. */
export function aiSdkGenerateResponse(text: string | undefined, calls: readonly MatrixToolCall[] = []) {
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

/** A `doStream` result: the text as one delta, then the calls, then the finish with its reason. */
export function aiSdkStreamResponse(text: string | undefined, calls: readonly MatrixToolCall[] = []) {
  const parts = [
    { type: "stream-start" as const, warnings: [] },
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

/** The parts of an AI SDK prompt message that the matrix script reads. */
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

/** The matrix script as a `doStream`: it reads the prompt's trailing tool message. */
export function aiSdkMatrixDoStream(sidecar: MatrixSidecarArgs) {
  return aiSdkDoStream((call) => matrixReply(sidecar, call));
}

/** `reply` as a `doStream`: the prompt read as a `MatrixModelCall`, the reply streamed back. */
export function aiSdkDoStream(reply: (call: MatrixModelCall) => Promise<MatrixReply>) {
  return async (options: { readonly prompt: readonly AiSdkPromptMessage[]; readonly abortSignal?: AbortSignal | undefined }) => {
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
    });
    return aiSdkStreamResponse(answer.text, answer.calls);
  };
}
