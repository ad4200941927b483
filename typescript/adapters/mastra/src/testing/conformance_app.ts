/**
 * The Mastra conformance app: `MastraRunner` over a Mastra `Agent` whose tools
 * and `MockLanguageModelV4` answers are the conformance data file's
 * (`ConformanceScript`), plus a structured-output runner (Mastra's
 * `structuredOutput` with a Zod schema of the file's output, and its validator)
 * for a session whose first prompt asks for the output. The model answers
 * through `answer`: the script in the sidecar (conformance_sidecar.ts), a
 * fixture's model script in run_states.test.ts. Plan mode and compaction are
 * forwarded, so the run-state recorder reaches its mid_plan and
 * after_compaction points.
 *
 * @module
 */

import { MessageRole } from "@dex-agents/contracts";
import type { AgentFrameworkRunner, AgentTurnContext, DeferredToolOutcome } from "@dex-agents/core";
import { aiSdkDoStream, type ConformanceScript, type ScriptedAnswer, type ScriptedModelCall } from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { dexToolCall, MastraRunner } from "../index.js";

function shape(fields: Record<string, string>) {
  return z.object(Object.fromEntries(Object.entries(fields).map(([k, type]) => [k, type === "number" ? z.number() : type === "boolean" ? z.boolean() : z.string()])));
}

/** The conformance runner: the tools runner, or the structured-output one for a session that asks for the output. */
export function conformanceRunner(
  script: ConformanceScript,
  answer: (call: ScriptedModelCall) => Promise<ScriptedAnswer> = (call) => script.answer(call),
): AgentFrameworkRunner<DeferredToolOutcome> {
  // The cast: @mastra/core bundles its own copy of the provider types (mastra_contract.test.ts).
  const model = new MockLanguageModelV4({ doStream: aiSdkDoStream(answer) }) as unknown as MastraModelConfig;
  const tools = new MastraRunner({
    agent: new Agent({ id: "conformance", name: "conformance", instructions: "Answer with the tools.", model }),
    tools: Object.fromEntries(
      script.tools.map((t) => [
        t.name,
        createTool({
          id: t.name,
          description: script.description(t.name),
          inputSchema: shape(script.parameters(t.name)),
          execute: (input, context) =>
            script.runTool(t.name, input as Record<string, unknown>, dexToolCall(context)?.idempotencyKey, context.abortSignal),
        }),
      ]),
    ),
    toolPolicies: script.policies(),
  });
  const output = new MastraRunner({
    agent: new Agent({ id: "city", name: "city", instructions: "Answer with the city.", model }),
    output: {
      schema: shape(script.data.output.fields),
      validate: (value: Record<string, unknown>) => script.retryReason(value),
    },
  });

  function pick(turn: AgentTurnContext): MastraRunner {
    return script.asksForOutput(turn.messages.find((m) => m.role === MessageRole.USER)?.text) ? output : tools;
  }

  return {
    describe: () => tools.describe(),
    buildUserMessage: (text) => tools.buildUserMessage(text),
    runModelStep: (turn) => pick(turn).runModelStep(turn),
    buildUnfinishedTurnMessages: (turn) => pick(turn).buildUnfinishedTurnMessages(turn),
    executeDeferredToolCall: (call) => tools.executeDeferredToolCall(call),
    supportsPlanMode: tools.supportsPlanMode,
    estimateInputTokens: (turn) => pick(turn).estimateInputTokens(turn),
    selectCompactionCutoff: (turn, budget) => pick(turn).selectCompactionCutoff(turn, budget),
    summarizeContext: (request) => tools.summarizeContext(request),
  };
}
