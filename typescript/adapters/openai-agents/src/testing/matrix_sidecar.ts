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
import { matrixSidecarArgs, serveMatrixRunner } from "@dex-agents/core/testing";
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { dexRunInfo, OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults, userTexts, type ScriptedCall } from "./scripted_model.js";

const sidecar = matrixSidecarArgs();
const log = (entry: Record<string, unknown>): void => sidecar.runLog.write(entry);
const gate = (name: string, signal?: AbortSignal): Promise<void> => sidecar.runLog.waitForGate(name, signal);

function calls(prompt: string, n: number): ScriptedCall[] {
  const city = (p: string): string => p.split(" ").slice(1).join(" ") || "Paris";
  if (prompt.startsWith("slow")) return [{ callId: `w${n}`, name: "get_weather", arguments: { city: "Paris" } }];
  if (prompt.startsWith("weather in ")) {
    return [{ callId: `w${n}`, name: "get_weather", arguments: { city: prompt.slice("weather in ".length).replace(/\?$/, "") } }];
  }
  if (prompt.startsWith("parallel")) {
    return [
      { callId: `a${n}`, name: "get_weather", arguments: { city: "Oslo" } },
      { callId: `b${n}`, name: "get_weather", arguments: { city: "Lima" } },
    ];
  }
  if (prompt.startsWith("book")) {
    return [
      { callId: `r${n}`, name: "get_weather", arguments: { city: city(prompt) } },
      { callId: `k${n}`, name: "book_trip", arguments: { city: city(prompt) } },
    ];
  }
  if (prompt.startsWith("charge")) return [{ callId: `p${n}`, name: "charge", arguments: { usd: 5 } }];
  if (prompt.startsWith("fail")) return [{ callId: `f${n}`, name: "charge_now", arguments: { usd: 5 } }];
  return [];
}

const model = new ScriptedModel(async (request) => {
  const prompts = userTexts(request);
  const trailing = trailingResults(request);
  const results = Object.fromEntries([...trailing].map(([id, r]) => [id, r.text]));
  log({ kind: "model", name: "model", prompts, results });
  const current = prompts.at(-1) ?? "";
  if (trailing.size > 0) {
    if (current.startsWith("slow")) {
      try {
        await gate("model", request.signal);
      } catch (error) {
        // cancel_turn reached the SDK's run signal through cancellationSignal.
        log({ kind: "model_aborted", name: "model", prompts });
        throw error;
      }
    }
    if (current.startsWith("fail")) throw new Error("model unavailable");
    return { text: `Results: ${[...trailing.values()].map((r) => `${r.name}=${r.text}`).join("; ")}` };
  }
  const asked = calls(current, prompts.length);
  if (asked.length > 0) return { calls: asked };
  const seen = typeof request.input === "string" ? 1 : request.input.length;
  return { text: `I have seen ${seen} messages.` };
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
