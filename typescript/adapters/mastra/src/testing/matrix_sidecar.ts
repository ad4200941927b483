/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T` (under Node 22): `MastraRunner` over a Mastra `Agent` whose
 * model is a `MockLanguageModelV4` following the shared prompts of
 * `dex_agents_testing.matrix` (`aiSdkMatrixDoStream` of @dex-agents/core),
 * served by `serveRunners`. Model calls and tool runs go to the run log in
 * the matrix's JSON-lines format, each tool run with the idempotency key its
 * Dex call gives it; gate files hold the `model` and `charge` calls. A
 * session that asks about a "city" reaches a second `MastraRunner` with
 * structured output (Mastra's `structuredOutput` with a Zod schema, and a
 * validator that wants the name capitalized); its model answers "paris" first
 * and "Paris" after a retry. Prints `listening <address>` once up.
 *
 * @module
 */

import { MessageRole, ToolEffect } from "@dex-agents/contracts";
import type { AgentFrameworkRunner, AgentTurnContext, DeferredToolOutcome } from "@dex-agents/core";
import {
  aiSdkMatrixDoStream,
  aiSdkStreamResponse,
  aiSdkUserPrompts,
  matrixSidecarArgs,
  serveMatrixRunner,
} from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { dexToolCall, MastraRunner } from "../index.js";

const sidecar = matrixSidecarArgs();
const log = (name: string, context: Parameters<typeof dexToolCall>[0]): void =>
  sidecar.runLog.write({ kind: "tool", name, key: dexToolCall(context)?.idempotencyKey });

const matrix = aiSdkMatrixDoStream(sidecar);
const model = new MockLanguageModelV4({
  doStream: async (options) => {
    const prompts = aiSdkUserPrompts(options.prompt);
    if (!prompts[0]?.startsWith("city")) return matrix(options);
    sidecar.runLog.write({ kind: "model", name: "model", prompts, results: {} });
    if (options.responseFormat?.type !== "json") throw new Error("a city question came without the JSON response format");
    // Lower case until the model has seen one answer of its own.
    const answered = options.prompt.some((m) => m.role === "assistant");
    return aiSdkStreamResponse(JSON.stringify({ name: answered ? "Paris" : "paris", country: "FR" }));
  },
});

const city = z.object({ city: z.string() });
const usd = z.object({ usd: z.number() });

const tools = new MastraRunner({
  // The cast: @mastra/core bundles its own copy of the provider types (mastra_contract.test.ts).
  agent: new Agent({ id: "matrix", name: "matrix", instructions: "Answer with the tools.", model: model as unknown as MastraModelConfig }),
  tools: {
    get_weather: createTool({
      id: "get_weather",
      description: "The weather in a city",
      inputSchema: city,
      execute: async (input, context) => {
        log("get_weather", context);
        return `sunny in ${input.city}`;
      },
    }),
    book_trip: createTool({
      id: "book_trip",
      description: "Books a trip to a city",
      inputSchema: city,
      execute: async (input, context) => {
        log("book_trip", context);
        return `booked ${input.city}`;
      },
    }),
    charge_now: createTool({
      id: "charge_now",
      description: "Charges the card at once",
      inputSchema: usd,
      execute: async (input, context) => {
        log("charge_now", context);
        return `charged ${input.usd} USD`;
      },
    }),
    charge: createTool({
      id: "charge",
      description: "Charges the card",
      inputSchema: usd,
      execute: async (input, context) => {
        log("charge", context);
        await sidecar.runLog.waitForGate("charge", context.abortSignal);
        return `charged ${input.usd} USD`;
      },
    }),
  },
  toolPolicies: {
    get_weather: { effect: ToolEffect.READ },
    book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true },
    charge_now: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
    charge: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
  },
});

const cityOutput = new MastraRunner({
  agent: new Agent({ id: "city", name: "city", instructions: "Answer with the city.", model: model as unknown as MastraModelConfig }),
  output: {
    schema: z.object({ name: z.string(), country: z.string() }),
    validate: (answer: { name: string }) =>
      answer.name === answer.name.charAt(0).toUpperCase() + answer.name.slice(1) ? undefined : "Capitalize the city name.",
  },
});

/** The session's runner: the structured one for a session that asked about a city. */
function pick(turn: AgentTurnContext): MastraRunner {
  const first = turn.messages.find((m) => m.role === MessageRole.USER);
  return first?.text?.startsWith("city") === true ? cityOutput : tools;
}

const runner: AgentFrameworkRunner<DeferredToolOutcome> = {
  buildUserMessage: (text) => tools.buildUserMessage(text),
  runModelStep: (turn) => pick(turn).runModelStep(turn),
  buildUnfinishedTurnMessages: (turn) => pick(turn).buildUnfinishedTurnMessages(turn),
  executeDeferredToolCall: (call) => tools.executeDeferredToolCall(call),
};

await serveMatrixRunner(sidecar, runner);
