/**
 * A scripted `Model` of `@openai/agents-core` for tests: no key, no network.
 * Each call asks `respond` for a reply (text and/or function calls) and
 * returns it as a non-streamed `ModelResponse` or as the stream events the
 * SDK's Responses model emits (text deltas, then `response_done`).
 *
 * @module
 */

import { Usage, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from "@openai/agents";

type DoneOutput = Extract<StreamEvent, { type: "response_done" }>["response"]["output"];

export interface ScriptedCall {
  readonly callId: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
}

export interface ScriptedReply {
  readonly text?: string;
  readonly calls?: readonly ScriptedCall[];
}

export type Respond = (request: ModelRequest, index: number) => ScriptedReply | Promise<ScriptedReply>;

export class ScriptedModel implements Model {
  /** Every request, in call order. */
  readonly requests: ModelRequest[] = [];
  readonly #respond: Respond;

  constructor(respond: Respond) {
    this.#respond = respond;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const index = this.requests.push(request) - 1;
    return responseOf(await this.#respond(request, index), index);
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const index = this.requests.push(request) - 1;
    const reply = await this.#respond(request, index);
    yield { type: "response_started" };
    if (reply.text !== undefined) yield { type: "output_text_delta", delta: reply.text };
    const response = responseOf(reply, index);
    yield {
      type: "response_done",
      response: {
        id: response.responseId ?? `resp-${index}`,
        usage: {
          requests: 1,
          inputTokens: response.usage.inputTokens,
          outputTokens: response.usage.outputTokens,
          totalTokens: response.usage.totalTokens,
        },
        output: response.output,
      },
    };
  }
}

function responseOf(reply: ScriptedReply, index: number): ModelResponse & { output: DoneOutput } {
  const output: DoneOutput = [];
  if (reply.text !== undefined) {
    output.push({
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text }],
    });
  }
  for (const call of reply.calls ?? []) {
    output.push({
      type: "function_call",
      callId: call.callId,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: "completed",
    });
  }
  return {
    usage: new Usage({ requests: 1, inputTokens: 12, outputTokens: 3, totalTokens: 15 }),
    output,
    responseId: `resp-${index}`,
  };
}

/** The text of each user message of a request's input, oldest first. */
export function userTexts(request: ModelRequest): string[] {
  if (typeof request.input === "string") return [request.input];
  return request.input.flatMap((item) => {
    if (item.type !== "message" || item.role !== "user") return [];
    const content = item.content;
    return [typeof content === "string" ? content : content.map((p) => (p.type === "input_text" ? p.text : "")).join("")];
  });
}

/** The function call results at the end of a request's input, by call ID. */
export function trailingResults(request: ModelRequest): Map<string, { name: string; text: string }> {
  const results = new Map<string, { name: string; text: string }>();
  if (typeof request.input === "string") return results;
  for (let i = request.input.length - 1; i >= 0; i--) {
    const item = request.input[i];
    if (item?.type !== "function_call_result") break;
    const output = item.output;
    const text =
      typeof output === "string"
        ? output
        : !Array.isArray(output) && output.type === "text"
          ? output.text
          : JSON.stringify(output);
    results.set(item.callId, { name: item.name, text });
  }
  return new Map([...results].reverse());
}
