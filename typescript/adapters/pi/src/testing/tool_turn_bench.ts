/**
 * `node dist/testing/tool_turn_bench.js --turns N --warmup W`: the tool turn
 * ("weather in Paris?" -> get_weather -> the answer) on pi-ai's faux provider,
 * run plainly by pi-agent-core's `Agent` and by `PiRunner`'s three runner
 * calls in-process (no Dex). Prints one JSON line of per-turn milliseconds;
 * python/bench/pi_tool_turn.py adds the same turn through Dex.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { AgentToolCallSchema, ToolCallStatus, ToolEffect } from "@dex-agents/contracts";
import type { AgentTurnContext } from "@dex-agents/core";
import { deferredExecution, storedUserMessage, testTurn, timedRuns } from "@dex-agents/core/testing";
import { Agent, type AgentTool } from "@mariozechner/pi-agent-core";
import { fauxAssistantMessage, fauxToolCall, registerFauxProvider, Type, type Context } from "@mariozechner/pi-ai";
import { PiRunner } from "../index.js";
import { isTurnCompleted, isToolCallsRequested, isToolResult } from "@dex-agents/core";

const { values } = parseArgs({ options: { turns: { type: "string", default: "200" }, warmup: { type: "string", default: "20" } } });
const turns = Number(values.turns);
const warmup = Number(values.warmup);
const ANSWER = "Results: get_weather=sunny in Paris";

const faux = registerFauxProvider();
const respond = (context: Context) => {
  const last = context.messages.at(-1);
  if (last?.role === "toolResult") {
    const text = last.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    return fauxAssistantMessage(`Results: ${last.toolName}=${text}`);
  }
  return fauxAssistantMessage(fauxToolCall("get_weather", { city: "Paris" }, { id: "w1" }), { stopReason: "toolUse" });
};
const refill = (): void => faux.setResponses(Array.from({ length: 4 }, () => respond));

const city = Type.Object({ city: Type.String() });
const weather: AgentTool<typeof city> = {
  name: "get_weather",
  label: "Weather",
  description: "The weather in a city",
  parameters: city,
  execute: async (_id, p) => ({ content: [{ type: "text", text: `sunny in ${p.city}` }], details: {} }),
};

async function plain(): Promise<void> {
  const agent = new Agent({ initialState: { model: faux.getModel(), tools: [weather], systemPrompt: "" } });
  await agent.prompt("weather in Paris?");
  const last = agent.state.messages.at(-1);
  const text = last?.role === "assistant" ? last.content.map((c) => (c.type === "text" ? c.text : "")).join("") : "";
  if (text !== ANSWER) throw new Error(`plain Agent ended with ${JSON.stringify(text)}`);
}

const runner = new PiRunner({ model: faux.getModel(), tools: [weather], toolPolicies: { get_weather: { effect: ToolEffect.READ } } });
const userItem = runner.buildUserMessage("weather in Paris?").frameworkItem;
function context(frameworkRunState: string | undefined, toolCalls: AgentTurnContext["toolCalls"]): AgentTurnContext {
  return testTurn({ messages: [storedUserMessage("weather in Paris?", userItem)], frameworkRunState, toolCalls });
}

async function adapter(): Promise<void> {
  const first = await runner.runModelStep(context(undefined, []));
  if (!isToolCallsRequested(first)) throw new Error(`expected tool calls, got ${first.$typeName}`);
  const record = create(AgentToolCallSchema, { toolCallId: "w1", toolName: "get_weather", arguments: first.toolCalls[0]!.arguments });
  const call = deferredExecution(record);
  const result = await runner.executeDeferredToolCall(call);
  if (!isToolResult(result)) throw new Error(`expected a result, got ${result.$typeName}`);
  const done = await runner.runModelStep(context(first.frameworkRunState, [{ ...record, status: ToolCallStatus.SUCCEEDED, output: result.output }]));
  if (!isTurnCompleted(done) || done.newMessages.at(-1)?.text !== ANSWER) throw new Error("the adapter turn did not answer");
}

const time = (run: () => Promise<void>): Promise<number[]> => timedRuns({ turns, warmup }, run, refill);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const plainTimes = await time(plain);
const adapterTimes = await time(adapter);
process.stdout.write(`${JSON.stringify({ turns, plain_ms: median(plainTimes), adapter_ms: median(adapterTimes) })}\n`);
