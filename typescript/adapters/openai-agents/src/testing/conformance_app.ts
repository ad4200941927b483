/**
 * The OpenAI Agents matrix app: `OpenAiAgentsRunner` over the "matrix" agent
 * with the matrix's tools and a handoff to a "forecaster" agent, one
 * `ScriptedModel` for both. Matrix prompts are answered through `reply`: the
 * shared matrix script in the sidecar (matrix_sidecar.ts), a fixture's model
 * script in run_states.test.ts. "forecast CITY" hands off: the matrix agent
 * calls transfer_to_forecaster, the forecaster calls get_weather and answers
 * the results through `reply`, its text marked "forecaster: ", so a resumed
 * run shows which agent answered.
 *
 * @module
 */

import { ToolEffect } from "@dex-agents/contracts";
import { noteModelReply, type MatrixModelCall, type MatrixReply, type RunLog } from "@dex-agents/core/testing";
import { Agent, handoff, tool, type ModelRequest } from "@openai/agents";
import { z } from "zod";
import { dexRunInfo, OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults, userTexts, type ScriptedReply } from "./scripted_model.js";

const MATRIX = "Answer with the tools.";
const FORECASTER = "Forecast with get_weather.";

function key(): string | undefined {
  return dexRunInfo()?.idempotencyKey;
}

/** The matrix's `OpenAiAgentsRunner`; its tools log runs to `runLog` and wait at its gates. */
export function matrixRunner(
  reply: (call: MatrixModelCall) => Promise<MatrixReply>,
  runLog: Pick<RunLog, "write" | "waitForGate">,
): OpenAiAgentsRunner {
  const log = (entry: Record<string, unknown>): void => runLog.write(entry);

  /** The handoff's own moves, outside the matrix script; undefined when the script answers. */
  function handoffMove(request: ModelRequest, prompts: readonly string[], answered: boolean): ScriptedReply | undefined {
    const prompt = prompts.at(-1) ?? "";
    if (!prompt.startsWith("forecast ") || answered) return undefined;
    const n = prompts.length;
    if (request.systemInstructions === MATRIX) return { calls: [{ callId: `h${n}`, name: "transfer_to_forecaster", arguments: {} }] };
    return { calls: [{ callId: `w${n}`, name: "get_weather", arguments: { city: prompt.slice("forecast ".length) } }] };
  }

  const model = new ScriptedModel(async (request) => {
    const trailing = trailingResults(request);
    const prompts = userTexts(request);
    const results = [...trailing].map(([toolCallId, r]) => ({ toolCallId, toolName: r.name, output: r.text }));
    // The forecaster's first call sees the handoff's own result, which it does not answer.
    const move = handoffMove(request, prompts, results.some((r) => !r.toolName.startsWith("transfer_to_")));
    if (move !== undefined) {
      noteModelReply(move);
      return move;
    }
    const answer = await reply({
      prompts,
      results,
      messageCount: typeof request.input === "string" ? 1 : request.input.length,
      signal: request.signal,
    });
    const text = answer.text !== undefined && request.systemInstructions === FORECASTER ? `forecaster: ${answer.text}` : answer.text;
    return {
      ...(text !== undefined ? { text } : {}),
      calls: answer.calls.map((c) => ({ callId: c.id, name: c.name, arguments: c.input })),
    };
  });

  const city = z.object({ city: z.string() });
  const usd = z.object({ usd: z.number() });
  const getWeather = tool({
    name: "get_weather",
    description: "The weather in a city",
    parameters: city,
    execute: async (input) => {
      log({ kind: "tool", name: "get_weather", key: key() });
      return `sunny in ${input.city}`;
    },
  });
  const forecaster = new Agent({ name: "forecaster", instructions: FORECASTER, model, tools: [getWeather] });
  const agent = new Agent({
    name: "matrix",
    instructions: MATRIX,
    model,
    handoffs: [handoff(forecaster)],
    tools: [
      getWeather,
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
          await runLog.waitForGate("charge", details?.signal);
          return `charged ${input.usd} USD`;
        },
      }),
    ],
  });

  return new OpenAiAgentsRunner({
    agent,
    toolPolicies: {
      get_weather: { effect: ToolEffect.READ },
      book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE },
      charge_now: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
      charge: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
    },
  });
}
