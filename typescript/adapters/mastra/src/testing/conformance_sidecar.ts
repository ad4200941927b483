/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T` (under Node 22): the matrix app (`matrix_app.ts`) whose model
 * follows the shared prompts of `dex_agents_testing.matrix`, served by
 * `serveRunners`. Model calls and tool runs go to the run log in the matrix's
 * JSON-lines format, each tool run with the idempotency key its Dex call gives
 * it; gate files hold the `model` and `charge` calls. A session that asks about
 * a "city" reaches a second `MastraRunner` with structured output (Mastra's
 * `structuredOutput` with a Zod schema, and a validator that wants the name
 * capitalized); its model answers "paris" first and "Paris" after a retry.
 * The runner forwards plan mode and compaction, so the run-state recorder
 * (python/core/tests/record_ts_run_states.py) reaches its mid_plan and
 * after_compaction points.
 * Prints `listening <address>` once up.
 *
 * @module
 */

import { MessageRole } from "@dex-agents/contracts";
import type { AgentFrameworkRunner, AgentTurnContext, DeferredToolOutcome } from "@dex-agents/core";
import {
  aiSdkStreamResponse,
  aiSdkUserPrompts,
  matrixReply,
  conformanceSidecarArgs,
  serveConformanceRunner,
} from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { MastraRunner } from "../index.js";
import { matrixRunner } from "./matrix_app.js";

const sidecar = conformanceSidecarArgs();
const tools = matrixRunner((call) => matrixReply(sidecar, call), sidecar.runLog);

const cityModel = new MockLanguageModelV4({
  doStream: async (options) => {
    const prompts = aiSdkUserPrompts(options.prompt);
    sidecar.runLog.write({ kind: "model", name: "model", prompts, results: {} });
    if (options.responseFormat?.type !== "json") throw new Error("a city question came without the JSON response format");
    // Lower case until the model has seen one answer of its own.
    const answered = options.prompt.some((m) => m.role === "assistant");
    return aiSdkStreamResponse(JSON.stringify({ name: answered ? "Paris" : "paris", country: "FR" }));
  },
});

const cityOutput = new MastraRunner({
  // The cast: @mastra/core bundles its own copy of the provider types (mastra_contract.test.ts).
  agent: new Agent({ id: "city", name: "city", instructions: "Answer with the city.", model: cityModel as unknown as MastraModelConfig }),
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
  // Planning turns and compaction, for the run-state recorder's mid_plan and after_compaction.
  supportsPlanMode: tools.supportsPlanMode,
  estimateInputTokens: (turn) => pick(turn).estimateInputTokens(turn),
  selectCompactionCutoff: (turn, budget) => pick(turn).selectCompactionCutoff(turn, budget),
  summarizeContext: (request) => tools.summarizeContext(request),
};

await serveConformanceRunner(sidecar, runner);
