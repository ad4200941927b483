/**
 * The Vercel AI SDK's conformance app: `VercelAiRunner` with a
 * `MockLanguageModelV4` whose answers and tools are the conformance data file's
 * (`ConformanceScript`), plus a structured-output runner (`Output.object` and
 * the file's validator) for a session whose first prompt asks for the output.
 * The model answers through `answer`: the script in the sidecar
 * (conformance_sidecar.ts), a fixture's model script in run_states.test.ts.
 *
 * @module
 */

import { MessageRole } from "@dex-agents/contracts";
import type { AgentFrameworkRunner, AgentTurnContext, ToolExecutionResult } from "@dex-agents/core";
import { aiSdkDoStream, type ConformanceScript, type ScriptedAnswer, type ScriptedModelCall } from "@dex-agents/core/testing";
import { jsonSchema, Output } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { VercelAiRunner, type VercelAiTool } from "../index.js";

type Fields = Record<string, "string" | "number" | "boolean">;

function schema(fields: Fields, required: boolean) {
  const properties = Object.fromEntries(Object.entries(fields).map(([k, type]) => [k, { type }]));
  return jsonSchema<Record<string, unknown>>({ type: "object", properties, ...(required ? { required: Object.keys(fields) } : {}) });
}

/** The conformance runner: the tools runner, or the structured-output one for a session that asks for the output. */
export function conformanceRunner(
  script: ConformanceScript,
  answer: (call: ScriptedModelCall) => Promise<ScriptedAnswer> = (call) => script.answer(call),
): AgentFrameworkRunner<ToolExecutionResult> {
  const model = new MockLanguageModelV4({ doStream: aiSdkDoStream(answer) });
  const tools: Record<string, VercelAiTool<Record<string, unknown>>> = Object.fromEntries(
    script.tools.map((t) => [
      t.name,
      {
        description: script.description(t.name),
        inputSchema: schema(script.parameters(t.name), false),
        effect: t.effect,
        ...(t.requiresApproval !== undefined ? { requiresApproval: t.requiresApproval } : {}),
        execute: (input: Record<string, unknown>, call) => script.runTool(t.name, input, call.idempotencyKey, call.cancellationSignal),
      },
    ]),
  );
  const withTools = new VercelAiRunner({ model, tools });
  const output = script.data.output;
  const withOutput = new VercelAiRunner({
    model,
    output: {
      spec: Output.object({ schema: schema(output.fields as Fields, true) }),
      validate: (value: Record<string, unknown>) => script.retryReason(value),
    },
  });

  function pick(turn: AgentTurnContext): VercelAiRunner {
    return script.asksForOutput(turn.messages.find((m) => m.role === MessageRole.USER)?.text) ? withOutput : withTools;
  }

  return {
    describe: () => withTools.describe(),
    buildUserMessage: (text) => withTools.buildUserMessage(text),
    runModelStep: (turn) => pick(turn).runModelStep(turn),
    buildUnfinishedTurnMessages: (turn) => pick(turn).buildUnfinishedTurnMessages(turn),
    executeDeferredToolCall: (call) => withTools.executeDeferredToolCall(call),
  };
}
