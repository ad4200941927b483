/**
 * `MastraModelClient`: a Mastra `Agent` as the Stepwise loop's `ModelClient`.
 * One `complete` is one `agent.stream` call with `maxSteps: 1` and every
 * offered tool as a client tool without `execute`, so the agent stops with
 * the model's calls unrun and the session runs each in its own tool Step.
 * The SDK does not retry (`maxRetries: 0`): the RunModel Step's retry policy
 * does. Text and reasoning deltas stream as events; an error or abort chunk
 * fails the attempt, except Mastra's schema-validation error of a structured
 * answer (`output.ts`), which the Stepwise loop retries.
 *
 * @module
 */

import type { ModelClient, ModelRequest, ModelResponse, ModelToolChoice, ToolSpec } from "@dex-agents/core";
import type { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { aiSdkMessages } from "./messages.js";
import { mastraStructuredOutput, schemaFailure, type MastraOutput } from "./output.js";

type JsonSchemaInput = Parameters<typeof createTool>[0]["inputSchema"];

/** Any agent: the runner reads only its model, instructions, memory and tools; `any`: Agent's type parameters describe its output and request context. */
export type MastraAgent = Agent<any, any, any, any, any>;

/** The agent's own tools would run inside the model call, out of the session's sight. */
export class AgentOwnedToolsError extends Error {
  override name = "AgentOwnedToolsError";
}

function clientTools(specs: readonly ToolSpec[]): Record<string, ReturnType<typeof createTool>> {
  return Object.fromEntries(
    specs.map((spec) => [
      spec.name,
      // No execute: Mastra hands the call back instead of running it.
      createTool({ id: spec.name, description: spec.description, inputSchema: spec.parameters as JsonSchemaInput }),
    ]),
  );
}

function mastraToolChoice(choice: ModelToolChoice): "auto" | { type: "tool"; toolName: string } {
  return choice === "auto" ? "auto" : { type: "tool", toolName: choice.name };
}

function asError(value: unknown, fallback: string): Error {
  if (value instanceof Error) return value;
  const message = typeof value === "object" && value !== null ? (value as { message?: unknown }).message : undefined;
  return new Error(typeof message === "string" ? message : fallback);
}

export class MastraModelClient implements ModelClient {
  readonly agent: MastraAgent;
  readonly output: MastraOutput<any> | undefined;
  #ownToolsChecked: Promise<void> | undefined;

  /** With `output`, a request for structured output passes its schema to Mastra. */
  constructor(agent: MastraAgent, output?: MastraOutput<any>) {
    this.agent = agent;
    this.output = output;
  }

  /** Refuses, once per client, an agent that carries tools of its own. */
  #checkOwnTools(): Promise<void> {
    this.#ownToolsChecked ??= this.agent.listTools().then((tools) => {
      const names = Object.keys(tools);
      if (names.length > 0) {
        throw new AgentOwnedToolsError(
          `the Mastra agent ${JSON.stringify(this.agent.name)} has tools of its own (${names.join(", ")}), which would run ` +
            "inside the model call and not durably; give them to MastraRunner's `tools` instead",
        );
      }
    });
    return this.#ownToolsChecked;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    await this.#checkOwnTools();
    const structured = request.structuredOutput === true ? this.output : undefined;
    if (request.structuredOutput === true && structured === undefined) {
      throw new TypeError("structured output was asked of a MastraModelClient built without `output`");
    }
    const messages = aiSdkMessages(request.messages);
    const options = {
      ...(request.instructions !== undefined ? { system: request.instructions } : {}),
      clientTools: clientTools(request.tools),
      toolChoice: mastraToolChoice(request.toolChoice),
      maxSteps: 1,
      abortSignal: request.signal,
      modelSettings: { maxRetries: 0 },
    };
    // Two calls: `stream`'s overloads type its output by whether `structuredOutput` is given.
    const output =
      structured === undefined
        ? await this.agent.stream(messages, options)
        : await this.agent.stream(messages, { ...options, structuredOutput: mastraStructuredOutput(structured) });
    let outputError: string | undefined;
    for await (const chunk of output.fullStream) {
      if (chunk.type === "text-delta") request.onDelta({ kind: "text", text: chunk.payload.text });
      else if (chunk.type === "reasoning-delta") request.onDelta({ kind: "reasoning", text: chunk.payload.text });
      else if (chunk.type === "error") {
        outputError = structured !== undefined ? schemaFailure(chunk.payload.error) : undefined;
        if (outputError === undefined) throw asError(chunk.payload.error, "the Mastra model call failed");
      } else if (chunk.type === "abort") throw asError(request.signal.reason, "the model call was aborted");
    }
    const [text, reasoning, toolCalls, usage, finishReason, response] = await Promise.all([
      output.text,
      output.reasoningText,
      output.toolCalls,
      output.usage,
      output.finishReason,
      output.response,
    ]);
    if (finishReason === "error" && outputError === undefined) {
      throw new Error("the Mastra model call failed without an error chunk");
    }
    // Mastra validates every final step; a response with tool calls is no answer yet.
    const answer =
      structured === undefined || toolCalls.length > 0
        ? {}
        : outputError !== undefined
          ? { outputError }
          : { output: (await output.object) as unknown };
    return {
      ...answer,
      text: text === "" ? undefined : text,
      reasoning: reasoning === undefined || reasoning === "" ? undefined : reasoning,
      toolCalls: toolCalls.map((call) => ({
        toolCallId: call.payload.toolCallId,
        toolName: call.payload.toolName,
        arguments: JSON.stringify(call.payload.args ?? {}),
      })),
      usage: {
        inputTokens: usage.inputTokens ?? 0,
        outputTokens: usage.outputTokens ?? 0,
        cachedInputTokens: usage.cachedInputTokens ?? 0,
        reasoningTokens: usage.reasoningTokens ?? 0,
      },
      metadata: {
        responseModel: response.modelId,
        responseId: response.id,
        finishReasons: finishReason !== undefined ? [finishReason] : [],
      },
    };
  }

  /** Mastra passes `{ type: "tool", toolName }` through to the model. */
  supportsForcedToolChoice(): boolean {
    return true;
  }
}
