import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  AgentToolCallSchema,
  InteractionMode,
  MessageRole,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentToolCall,
} from "@dex-agents/contracts";
import { resolveToolPolicy, type AgentTurnContext, type DeferredToolExecution } from "@dex-agents/core";
import { jsonSchema, type ModelMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { VercelAiRunner } from "./index.js";

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};

function toolCallStream() {
  return {
    stream: convertArrayToReadableStream([
      { type: "stream-start" as const, warnings: [] },
      { type: "tool-call" as const, toolCallId: "w1", toolName: "get_weather", input: '{"city":"Paris"}' },
      { type: "finish" as const, finishReason: { unified: "tool-calls" as const, raw: undefined }, usage },
    ]),
  };
}

function textStream(text: string) {
  return {
    stream: convertArrayToReadableStream([
      { type: "stream-start" as const, warnings: [] },
      { type: "text-start" as const, id: "t" },
      { type: "text-delta" as const, id: "t", delta: text },
      { type: "text-end" as const, id: "t" },
      { type: "finish" as const, finishReason: { unified: "stop" as const, raw: undefined }, usage },
    ]),
  };
}

function turn(
  frameworkRunState: string | undefined,
  toolCalls: AgentToolCall[],
  events: AgentEventPayload[],
  signal: AbortSignal = new AbortController().signal,
): AgentTurnContext {
  const toolPolicies = new Map();
  return {
    flowId: "s1",
    turnId: "turn-1",
    attempt: 1,
    messages: [
      create(AgentMessageSchema, {
        sequence: 1n,
        turnId: "turn-1",
        role: MessageRole.USER,
        text: "weather in Paris?",
        frameworkItem: JSON.stringify({ role: "user", content: "weather in Paris?" }),
      }),
    ],
    frameworkRunState,
    toolCalls,
    toolPolicies,
    defaultToolEffect: ToolEffect.UNCLASSIFIED,
    enabledBuiltInTools: [],
    sessionSettings: {},
    interactionMode: InteractionMode.CHAT,
    plan: undefined,
    contextSummary: undefined,
    events: { write: (e) => void events.push(e), writeRaw: () => {} },
    heartbeat: async () => {},
    cancellationSignal: signal,
    resolveToolPolicy: (name, effect, approval) =>
      resolveToolPolicy(name, {
        toolPolicies,
        defaultEffect: ToolEffect.UNCLASSIFIED,
        frameworkEffect: effect,
        frameworkRequiresApproval: approval,
      }),
  };
}

function runner(model: MockLanguageModelV4, runs: string[]): VercelAiRunner {
  return new VercelAiRunner({
    model,
    tools: {
      get_weather: {
        description: "The weather in a city",
        inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } } }),
        effect: ToolEffect.READ,
        execute: async (input: { city: string }) => {
          runs.push(input.city);
          return `sunny in ${input.city}`;
        },
      },
    },
  });
}

test("a tool turn: the calls come back, the result goes in as a tool message", async () => {
  const model = new MockLanguageModelV4({ doStream: [toolCallStream(), textStream("It is sunny.")] });
  const runs: string[] = [];
  const r = runner(model, runs);
  const events: AgentEventPayload[] = [];

  const first = await r.runModelStep(turn(undefined, [], events));
  assert.equal(first.kind, "tool_calls_requested");
  if (first.kind !== "tool_calls_requested") return;
  assert.deepEqual(
    first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, c.policy]),
    [["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }]],
  );
  const state = JSON.parse(first.frameworkRunState) as ModelMessage[];
  assert.deepEqual(state.map((m) => m.role), ["assistant"]);
  assert.equal(runs.length, 0, "the SDK ran no tool");

  const record = create(AgentToolCallSchema, {
    toolCallId: "w1",
    turnId: "turn-1",
    toolName: "get_weather",
    arguments: '{"city":"Paris"}',
    effect: ToolEffect.READ,
    status: ToolCallStatus.APPROVED,
  });
  const result = await r.executeDeferredToolCall({
    toolCall: record,
    heartbeat: async () => {},
  } as unknown as DeferredToolExecution);
  assert.deepEqual(result, { kind: "result", output: "sunny in Paris" });

  record.status = ToolCallStatus.SUCCEEDED;
  record.output = result.output;
  const second = await r.runModelStep(turn(first.frameworkRunState, [record], events));
  assert.equal(second.kind, "turn_completed");
  if (second.kind !== "turn_completed") return;
  assert.deepEqual(second.newMessages.map((m) => m.role), ["assistant", "tool", "assistant"]);
  assert.equal(second.newMessages[1]?.toolOutput, "sunny in Paris");
  assert.equal(second.newMessages[2]?.text, "It is sunny.");
  assert.equal(second.usage?.inputTokens, 12);
  // The second model call got the tool result as a tool message with a tool-result part.
  const prompt = model.doStreamCalls[1]?.prompt ?? [];
  const tool = prompt.find((m) => m.role === "tool");
  assert.equal(tool?.content[0]?.type, "tool-result");
  assert.deepEqual(
    events.map((e) => (e.type === "text_delta" ? e.payload.text : e.type)),
    ["It is sunny."],
  );
});

test("an aborted cancellationSignal stops the running model call", async () => {
  const model = new MockLanguageModelV4({
    doStream: async ({ abortSignal }) => {
      await new Promise<void>((_, reject) => abortSignal?.addEventListener("abort", () => reject(abortSignal.reason)));
      return textStream("never");
    },
  });
  const controller = new AbortController();
  const running = runner(model, []).runModelStep(turn(undefined, [], [], controller.signal));
  controller.abort(new Error("cancel_turn"));
  await assert.rejects(running);
});
