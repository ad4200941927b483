/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `VercelAiRunner` with a scripted `MockLanguageModelV4`
 * that follows the shared prompts of `dex_agents_testing.matrix` (weather,
 * parallel, book, charge, slow, fail; otherwise "I have seen N messages."),
 * served by `serveRunners`. A session that asks about a "city" reaches a
 * second `VercelAiRunner` with structured output (`Output.object` and a
 * validator that wants the name capitalized); its model answers "paris"
 * first and "Paris" after a retry. Model calls and tool runs go to the run log in
 * the matrix's JSON-lines format; gate files hold the `model` and `charge`
 * calls. Prints `listening <address>` once up.
 *
 * @module
 */

import { MessageRole, ToolEffect } from "@dex-agents/contracts";
import {
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type ToolExecutionResult,
} from "@dex-agents/core";
import { matrixSidecarArgs, serveMatrixRunner } from "@dex-agents/core/testing";
import { jsonSchema, Output } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { VercelAiRunner } from "../index.js";

const sidecar = matrixSidecarArgs();
const log = (entry: Record<string, unknown>): void => sidecar.runLog.write(entry);
const gate = (name: string, signal?: AbortSignal): Promise<void> => sidecar.runLog.waitForGate(name, signal);

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

type Call = { readonly id: string; readonly name: string; readonly input: Record<string, unknown> };

function respond(text: string | undefined, calls: readonly Call[]) {
  return {
    stream: convertArrayToReadableStream([
      { type: "stream-start" as const, warnings: [] },
      ...(text === undefined
        ? []
        : [
            { type: "text-start" as const, id: "t" },
            { type: "text-delta" as const, id: "t", delta: text },
            { type: "text-end" as const, id: "t" },
          ]),
      ...calls.map((c) => ({
        type: "tool-call" as const,
        toolCallId: c.id,
        toolName: c.name,
        input: JSON.stringify(c.input),
      })),
      {
        type: "finish" as const,
        finishReason: { unified: calls.length > 0 ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
        usage,
      },
    ]),
  };
}

function calls(prompt: string, n: number): Call[] {
  const city = (p: string): string => p.split(" ").slice(1).join(" ") || "Paris";
  if (prompt.startsWith("slow")) return [{ id: `w${n}`, name: "get_weather", input: { city: "Paris" } }];
  if (prompt.startsWith("weather in ")) {
    return [{ id: `w${n}`, name: "get_weather", input: { city: prompt.slice("weather in ".length).replace(/\?$/, "") } }];
  }
  if (prompt.startsWith("parallel")) {
    return [
      { id: `a${n}`, name: "get_weather", input: { city: "Oslo" } },
      { id: `b${n}`, name: "get_weather", input: { city: "Lima" } },
    ];
  }
  if (prompt.startsWith("book")) {
    return [
      { id: `r${n}`, name: "get_weather", input: { city: city(prompt) } },
      { id: `k${n}`, name: "book_trip", input: { city: city(prompt) } },
    ];
  }
  if (prompt.startsWith("charge")) return [{ id: `p${n}`, name: "charge", input: { usd: 5 } }];
  if (prompt.startsWith("fail")) return [{ id: `f${n}`, name: "charge_now", input: { usd: 5 } }];
  return [];
}

/** The city answer: lower case until the model has seen one answer of its own. */
function cityAnswer(answered: boolean, json: boolean) {
  if (!json) throw new Error("a city question came without the JSON response format");
  return respond(JSON.stringify({ name: answered ? "Paris" : "paris", country: "FR" }), []);
}

const model = new MockLanguageModelV4({
  doStream: async ({ prompt, abortSignal, responseFormat }) => {
    const prompts = prompt
      .filter((m) => m.role === "user")
      .map((m) => m.content.map((p) => (p.type === "text" ? p.text : "")).join(""));
    const last = prompt.at(-1);
    const results: Record<string, string> = {};
    const named: string[] = [];
    if (last?.role === "tool") {
      for (const part of last.content) {
        if (part.type !== "tool-result") continue;
        const output = part.output.type === "text" ? part.output.value : JSON.stringify(part.output);
        results[part.toolCallId] = output;
        named.push(`${part.toolName}=${output}`);
      }
    }
    log({ kind: "model", name: "model", prompts, results });
    const current = prompts.at(-1) ?? "";
    if (prompts[0]?.startsWith("city")) {
      return cityAnswer(prompt.some((m) => m.role === "assistant"), responseFormat?.type === "json");
    }
    if (named.length > 0) {
      if (current.startsWith("slow")) {
        try {
          await gate("model", abortSignal);
        } catch (error) {
          // cancel_turn reached streamText's abortSignal through cancellationSignal.
          log({ kind: "model_aborted", name: "model", prompts });
          throw error;
        }
      }
      if (current.startsWith("fail")) throw new Error("model unavailable");
      return respond(`Results: ${named.join("; ")}`, []);
    }
    const asked = calls(current, prompts.length);
    if (asked.length > 0) return respond(undefined, asked);
    return respond(`I have seen ${prompt.filter((m) => m.role !== "system").length} messages.`, []);
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

type City = { name: string; country: string };

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

const runner: AgentFrameworkRunner<ToolExecutionResult> = {
  buildUserMessage: (text) => tools.buildUserMessage(text),
  runModelStep: (turn) => pick(turn).runModelStep(turn),
  buildUnfinishedTurnMessages: (turn) => pick(turn).buildUnfinishedTurnMessages(turn),
  executeDeferredToolCall: (call) => tools.executeDeferredToolCall(call),
};

await serveMatrixRunner(sidecar, runner);
