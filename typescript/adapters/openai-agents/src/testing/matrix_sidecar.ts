/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `OpenAiAgentsRunner` with a `ScriptedModel` that follows
 * the shared prompts of `dex_agents_testing.matrix` (weather, parallel, book,
 * charge, slow, fail; otherwise "I have seen N messages."), served by
 * `serveRunners`. Model calls and tool runs go to the run log in the
 * matrix's JSON-lines format; gate files hold the `model` and `charge`
 * calls. Prints `listening <address>` once up.
 *
 * @module
 */

import { ToolEffect } from "@dex-agents/contracts";
import { matrixReply, matrixSidecarArgs, serveMatrixRunner } from "@dex-agents/core/testing";
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { dexRunInfo, OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults, userTexts } from "./scripted_model.js";

const sidecar = matrixSidecarArgs();
const log = (entry: Record<string, unknown>): void => sidecar.runLog.write(entry);
const gate = (name: string, signal?: AbortSignal): Promise<void> => sidecar.runLog.waitForGate(name, signal);

const model = new ScriptedModel(async (request) => {
  const trailing = trailingResults(request);
  const reply = await matrixReply(sidecar, {
    prompts: userTexts(request),
    results: [...trailing].map(([toolCallId, r]) => ({ toolCallId, toolName: r.name, output: r.text })),
    messageCount: typeof request.input === "string" ? 1 : request.input.length,
    signal: request.signal,
  });
  return {
    ...(reply.text !== undefined ? { text: reply.text } : {}),
    calls: reply.calls.map((c) => ({ callId: c.id, name: c.name, arguments: c.input })),
  };
});

function key(): string | undefined {
  return dexRunInfo()?.idempotencyKey;
}

const city = z.object({ city: z.string() });
const usd = z.object({ usd: z.number() });
const agent = new Agent({
  name: "matrix",
  instructions: "Answer with the tools.",
  model,
  tools: [
    tool({
      name: "get_weather",
      description: "The weather in a city",
      parameters: city,
      execute: async (input) => {
        log({ kind: "tool", name: "get_weather", key: key() });
        return `sunny in ${input.city}`;
      },
    }),
    tool({
      name: "book_trip",
      description: "Books a trip to a city",
      parameters: city,
      needsApproval: true,
      execute: async (input) => {
        log({ kind: "tool", name: "book_trip", key: key() });
        return `booked ${input.city}`;
      },
    }),
    tool({
      name: "charge_now",
      description: "Charges the card at once",
      parameters: usd,
      execute: async (input) => {
        log({ kind: "tool", name: "charge_now", key: key() });
        return `charged ${input.usd} USD`;
      },
    }),
    tool({
      name: "charge",
      description: "Charges the card",
      parameters: usd,
      execute: async (input, _context, details) => {
        log({ kind: "tool", name: "charge", key: key() });
        await gate("charge", details?.signal);
        return `charged ${input.usd} USD`;
      },
    }),
  ],
});

const runner = new OpenAiAgentsRunner({
  agent,
  toolPolicies: {
    get_weather: { effect: ToolEffect.READ },
    book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE },
    charge_now: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
    charge: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
  },
});

await serveMatrixRunner(sidecar, runner);
