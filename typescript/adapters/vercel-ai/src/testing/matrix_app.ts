/**
 * The Vercel AI SDK matrix app: `VercelAiRunner` with a `MockLanguageModelV4`
 * and the matrix's tools, plus the structured-output runner of a "city"
 * session. Its model answers matrix prompts through `reply`: the shared
 * matrix script in the sidecar (matrix_sidecar.ts), a fixture's model script
 * in run_states.test.ts.
 *
 * @module
 */

import { MessageRole, ToolEffect } from "@dex-agents/contracts";
import {
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type ToolExecutionResult,
} from "@dex-agents/core";
import { aiSdkDoStream, aiSdkStreamResponse, aiSdkUserPrompts, type MatrixModelCall, type MatrixReply } from "@dex-agents/core/testing";
import { jsonSchema, Output } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { VercelAiRunner } from "../index.js";

type City = { name: string; country: string };

/** What the app's model and tools report to, and how its model answers a matrix prompt. */
export interface MatrixApp {
  readonly reply: (call: MatrixModelCall) => Promise<MatrixReply>;
  readonly log: (entry: Record<string, unknown>) => void;
  readonly gate: (name: string, signal?: AbortSignal) => Promise<void>;
}

/** The city answer: lower case until the model has seen one answer of its own. */
function cityAnswer(answered: boolean, json: boolean) {
  if (!json) throw new Error("a city question came without the JSON response format");
  return aiSdkStreamResponse(JSON.stringify({ name: answered ? "Paris" : "paris", country: "FR" }));
}

/**
 * The matrix's runner: the tools runner, or the structured-output one for a
 * session that asked about a city; its model answers matrix prompts through `app.reply`.
 */
export function matrixRunner(app: MatrixApp): AgentFrameworkRunner<ToolExecutionResult> {
  const { log, gate } = app;
  const matrix = aiSdkDoStream(app.reply);
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      const prompts = aiSdkUserPrompts(options.prompt);
      if (!prompts[0]?.startsWith("city")) return matrix(options);
      log({ kind: "model", name: "model", prompts, results: {} });
      return cityAnswer(options.prompt.some((m) => m.role === "assistant"), options.responseFormat?.type === "json");
    },
  });

  const city = jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } } });
  const tools = new VercelAiRunner({
    model,
    tools: {
      get_weather: {
        description: "The weather in a city",
        inputSchema: city,
        effect: ToolEffect.READ,
        execute: async (input: { city: string }, call) => {
          log({ kind: "tool", name: "get_weather", key: call.idempotencyKey });
          return `sunny in ${input.city}`;
        },
      },
      book_trip: {
        description: "Books a trip to a city",
        inputSchema: city,
        effect: ToolEffect.NON_IDEMPOTENT_WRITE,
        requiresApproval: true,
        execute: async (input: { city: string }, call) => {
          log({ kind: "tool", name: "book_trip", key: call.idempotencyKey });
          return `booked ${input.city}`;
        },
      },
      charge_now: {
        description: "Charges the card at once",
        inputSchema: jsonSchema<{ usd: number }>({ type: "object", properties: { usd: { type: "number" } } }),
        effect: ToolEffect.NON_IDEMPOTENT_WRITE,
        requiresApproval: false,
        execute: async (input: { usd: number }, call) => {
          log({ kind: "tool", name: "charge_now", key: call.idempotencyKey });
          return `charged ${input.usd} USD`;
        },
      },
      charge: {
        description: "Charges the card",
        inputSchema: jsonSchema<{ usd: number }>({ type: "object", properties: { usd: { type: "number" } } }),
        effect: ToolEffect.NON_IDEMPOTENT_WRITE,
        requiresApproval: false,
        execute: async (input: { usd: number }, call) => {
          log({ kind: "tool", name: "charge", key: call.idempotencyKey });
          await gate("charge", call.cancellationSignal);
          return `charged ${input.usd} USD`;
        },
      },
    },
  });

  const cityOutput = new VercelAiRunner({
    model,
    output: {
      spec: Output.object({
        schema: jsonSchema<City>({
          type: "object",
          properties: { name: { type: "string" }, country: { type: "string" } },
          required: ["name", "country"],
        }),
      }),
      validate: (answer: City) =>
        answer.name === answer.name.charAt(0).toUpperCase() + answer.name.slice(1) ? undefined : "Capitalize the city name.",
    },
  });

  /** The session's runner: the structured one for a session that asked about a city. */
  function pick(turn: AgentTurnContext): VercelAiRunner {
    const first = turn.messages.find((m) => m.role === MessageRole.USER);
    return first?.text?.startsWith("city") === true ? cityOutput : tools;
  }

  return {
    buildUserMessage: (text) => tools.buildUserMessage(text),
    runModelStep: (turn) => pick(turn).runModelStep(turn),
    buildUnfinishedTurnMessages: (turn) => pick(turn).buildUnfinishedTurnMessages(turn),
    executeDeferredToolCall: (call) => tools.executeDeferredToolCall(call),
  };
}
