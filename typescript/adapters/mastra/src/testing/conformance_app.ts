/**
 * The Mastra matrix app: `MastraRunner` over a Mastra `Agent` with the
 * matrix's tools, its model a `MockLanguageModelV4` answering matrix prompts
 * through `reply`: the shared matrix script in the sidecar (matrix_sidecar.ts),
 * a fixture's model script in run_states.test.ts.
 *
 * @module
 */

import { ToolEffect } from "@dex-agents/contracts";
import { aiSdkDoStream, type MatrixModelCall, type MatrixReply, type RunLog } from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { dexToolCall, MastraRunner } from "../index.js";

/** The matrix's `MastraRunner`; its tools log runs to `runLog` and wait at its gates. */
export function matrixRunner(reply: (call: MatrixModelCall) => Promise<MatrixReply>, runLog: Pick<RunLog, "write" | "waitForGate">): MastraRunner {
  const log = (name: string, context: Parameters<typeof dexToolCall>[0]): void =>
    runLog.write({ kind: "tool", name, key: dexToolCall(context)?.idempotencyKey });

  const model = new MockLanguageModelV4({ doStream: aiSdkDoStream(reply) });

  const city = z.object({ city: z.string() });
  const usd = z.object({ usd: z.number() });

  return new MastraRunner({
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
          await runLog.waitForGate("charge", context.abortSignal);
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
}
