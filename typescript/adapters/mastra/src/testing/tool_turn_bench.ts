/**
 * The tool turn of `python/bench/mastra_tool_turn.py`, in Node 22:
 * "What is the value of x?" -> a `lookup` call -> "x is 42.", the agent's
 * model a scripted `MockLanguageModelV4`.
 *
 * `--plain N --warmup W` runs it N + W times plainly with `Agent.generate`
 * (the agent owns the tool, which Mastra runs in-process), then as many times
 * through `MastraRunner`'s three runner calls in-process without Dex
 * (`runModelStep`, `executeDeferredToolCall`, `runModelStep`), and prints
 * `{"times_ms": [...], "adapter_ms": [...]}` for the N measured runs of each. `--address A --log PATH
 * --flow-type T` (the `Sidecar` arguments) serves `MastraRunner` over the
 * same model and tool instead, the tool given to the runner.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { AgentToolCallSchema, ToolCallStatus, ToolEffect } from "@dex-agents/contracts";
import {
  aiSdkGenerateResponse,
  aiSdkStreamResponse,
  deferredExecution,
  conformanceSidecarArgs,
  plainBenchArgs,
  serveConformanceRunner,
  storedUserMessage,
  testTurn,
  timedRuns,
  type ScriptedToolCall,
} from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { MastraRunner } from "../index.js";
import { isTurnCompleted, isToolCallsRequested, isToolResult } from "@dex-agents/core";

const QUESTION = "What is the value of x?";
const ANSWER = "x is 42.";

let calls = 0;
/** The answer after the tool's result, else a new `lookup` call. */
function reply(prompt: readonly { readonly role: string }[]): { text?: string; calls: ScriptedToolCall[] } {
  if (prompt.at(-1)?.role === "tool") return { text: ANSWER, calls: [] };
  calls += 1;
  return { calls: [{ id: `l${calls}`, name: "lookup", input: { key: "x" } }] };
}
// generate calls doGenerate, the runner's stream doStream: the same script for both.
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const r = reply(prompt);
    return aiSdkGenerateResponse(r.text, r.calls);
  },
  doStream: async ({ prompt }) => {
    const r = reply(prompt);
    return aiSdkStreamResponse(r.text, r.calls);
  },
});
// The mock keeps every call's options; the bench reads none.
const forgetCalls = (): void => {
  model.doGenerateCalls.splice(0);
  model.doStreamCalls.splice(0);
};
const lookup = createTool({
  id: "lookup",
  description: "Looks a value up",
  inputSchema: z.object({ key: z.string() }),
  execute: async () => "42",
});
// The cast: @mastra/core bundles its own copy of the provider types (mastra_contract.test.ts).
const mastraModel = model as unknown as MastraModelConfig;

/** The runner over an agent without tools of its own, as the sidecar serves it. */
function durableRunner(): MastraRunner {
  const agent = new Agent({ id: "bench", name: "bench", instructions: "Look values up.", model: mastraModel });
  return new MastraRunner({ agent, tools: { lookup }, toolPolicies: { lookup: { effect: ToolEffect.READ } } });
}

async function adapterTurn(runner: MastraRunner): Promise<void> {
  const messages = [storedUserMessage(QUESTION, runner.buildUserMessage(QUESTION).frameworkItem)];
  const first = await runner.runModelStep(testTurn({ messages }));
  const call = isToolCallsRequested(first) ? first.toolCalls[0] : undefined;
  if (!isToolCallsRequested(first) || call === undefined) throw new Error(`expected a tool call, got ${first.$typeName}`);
  const record = create(AgentToolCallSchema, { toolCallId: call.toolCallId, toolName: call.toolName, arguments: call.arguments });
  const result = await runner.executeDeferredToolCall(deferredExecution(record));
  if (!isToolResult(result)) throw new Error(`the tool ended with ${result.$typeName}`);
  const done = await runner.runModelStep(
    testTurn({
      messages,
      frameworkRunState: first.frameworkRunState,
      toolCalls: [{ ...record, status: ToolCallStatus.SUCCEEDED, output: result.output }],
    }),
  );
  if (!isTurnCompleted(done) || done.newMessages.at(-1)?.text !== ANSWER) throw new Error("the adapter turn did not answer");
}

const plainArgs = plainBenchArgs(10);
if (plainArgs !== undefined) {
  const agent = new Agent({ id: "bench", name: "bench", instructions: "Look values up.", model: mastraModel, tools: { lookup } });
  const plain = await timedRuns(plainArgs, async () => {
    const result = await agent.generate(QUESTION, { maxSteps: 2 });
    if (result.text !== ANSWER) throw new Error(`the plain run ended with ${JSON.stringify(result.text)}`);
  }, forgetCalls);
  const runner = durableRunner();
  const adapter = await timedRuns(plainArgs, () => adapterTurn(runner), forgetCalls);
  process.stdout.write(`${JSON.stringify({ times_ms: plain, adapter_ms: adapter })}\n`);
} else {
  setInterval(forgetCalls, 1000).unref();
  await serveConformanceRunner(conformanceSidecarArgs(), durableRunner());
}
