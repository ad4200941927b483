import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  AgentToolCallSchema,
  MessageRole,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentToolCall,
} from "@dex-agents/contracts";
import {
  type AgentTurnContext,
  type DeferredToolExecution,
  type FrameworkMessage,
  CAPABILITIES,
  describeRunner,
  supports,
  toolResult,
  isTurnCompleted,
  isToolCallsRequested,
  isTurnContinued,
  policyOf,
} from "@dex-agents/core";
import { jsonSchema, Output, type ModelMessage } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { aiSdkStreamResponse, storedUserMessage, testTurn } from "@dex-agents/core/testing";
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
  prompt = "weather in Paris?",
  stored: readonly FrameworkMessage[] = [],
): AgentTurnContext {
  const messages = [
    storedUserMessage(prompt, JSON.stringify({ role: "user", content: prompt })),
    // Messages a turn_continued outcome stored, as the session stores them.
    ...stored.map((m, i) =>
      create(AgentMessageSchema, {
        sequence: BigInt(i + 2),
        turnId: "turn-1",
        role: m.role,
        text: m.text ?? "",
        frameworkItem: m.frameworkItem,
      }),
    ),
  ];
  return testTurn({ messages, frameworkRunState, toolCalls, events, signal });
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
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.deepEqual(
    first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]),
    [["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }]],
  );
  // The run-state envelope's payload (RunStateFormat in @dex-agents/core).
  const envelope = JSON.parse(first.frameworkRunState) as { adapter: string; payload: string };
  assert.equal(envelope.adapter, "vercel-ai");
  const state = JSON.parse(envelope.payload) as { items: ModelMessage[] };
  assert.deepEqual(state.items.map((m) => m.role), ["assistant"]);
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
  assert.deepEqual(result, toolResult("sunny in Paris"));

  record.status = ToolCallStatus.SUCCEEDED;
  record.output = result.output;
  const second = await r.runModelStep(turn(first.frameworkRunState, [record], events));
  assert.ok(isTurnCompleted(second));
  if (!isTurnCompleted(second)) return;
  assert.deepEqual(second.newMessages.map((m) => m.role), [MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.ASSISTANT]);
  assert.equal(second.newMessages[1]?.toolOutput, "sunny in Paris");
  assert.equal(second.newMessages[2]?.text, "It is sunny.");
  assert.equal(second.usage?.inputTokens, 12n);
  // The second model call got the tool result as a tool message with a tool-result part.
  const prompt = model.doStreamCalls[1]?.prompt ?? [];
  const tool = prompt.find((m) => m.role === "tool");
  assert.equal(tool?.content[0]?.type, "tool-result");
  assert.deepEqual(
    events.map((e) => (e.type === "text_delta" ? e.payload.text : e.type)),
    ["It is sunny."],
  );
});

test("reasoning streams as reasoning_delta events before the answer's text_delta", async () => {
  const model = new MockLanguageModelV4({ doStream: aiSdkStreamResponse("I have seen 1 messages.", [], "Thinking first.") });
  const events: AgentEventPayload[] = [];
  const done = await runner(model, []).runModelStep(turn(undefined, [], events, undefined, "think it over"));
  assert.ok(isTurnCompleted(done));
  assert.deepEqual(
    events.map((e) => [e.type, e.type === "text_delta" || e.type === "reasoning_delta" ? e.payload.text : ""]),
    [
      ["reasoning_delta", "Thinking first."],
      ["text_delta", "I have seen 1 messages."],
    ],
  );
});

test("the session's enabled built-ins join the model's tools, and their calls are the session's", async () => {
  const model = new MockLanguageModelV4({
    doStream: async () => aiSdkStreamResponse(undefined, [{ id: "q1", name: "ask_user", input: { question: "Which city?" } }]),
  });
  const prompt = "ask me";
  const messages = [storedUserMessage(prompt, JSON.stringify({ role: "user", content: prompt }))];
  const asked = await runner(model, []).runModelStep(testTurn({ messages, enabledBuiltInTools: ["ask_user"] }));
  assert.deepEqual(
    model.doStreamCalls[0]?.tools?.map((t) => t.name),
    ["get_weather", "ask_user"],
  );
  assert.ok(isToolCallsRequested(asked));
  if (!isToolCallsRequested(asked)) return;
  assert.equal(asked.toolCalls[0]?.toolName, "ask_user");
  const clash = new VercelAiRunner({ model, tools: { ask_user: { inputSchema: jsonSchema({ type: "object" }), effect: ToolEffect.READ, execute: async () => "" } } });
  await assert.rejects(clash.runModelStep(testTurn({ messages, enabledBuiltInTools: ["ask_user"] })), /reserves/);
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

type City = { name: string; country: string };

function cityRunner(model: MockLanguageModelV4, maxRetries?: number): VercelAiRunner {
  // jsonSchema checks nothing by itself; its validate is the schema check the SDK runs.
  const schema = jsonSchema<City>(
    { type: "object", properties: { name: { type: "string" }, country: { type: "string" } }, required: ["name", "country"] },
    {
      validate: (value) => {
        const v = value as Partial<City> | null;
        return typeof v?.name === "string" && typeof v.country === "string"
          ? { success: true, value: { name: v.name, country: v.country } }
          : { success: false, error: new Error("name and country must be strings") };
      },
    },
  );
  return new VercelAiRunner({
    model,
    output: {
      spec: Output.object({ schema }),
      validate: (city: City) => (city.name === city.name.charAt(0).toUpperCase() + city.name.slice(1) ? undefined : "Capitalize the city name."),
      ...(maxRetries !== undefined ? { maxRetries } : {}),
    },
  });
}

test("structured output: a valid answer ends the turn with its JSON, the schema went to the model", async () => {
  const model = new MockLanguageModelV4({ doStream: [textStream('{"name":"Paris","country":"FR"}')] });
  const done = await cityRunner(model).runModelStep(turn(undefined, [], [], undefined, "city of light?"));
  assert.ok(isTurnCompleted(done));
  if (!isTurnCompleted(done)) return;
  assert.equal(done.turnError, undefined);
  assert.deepEqual(JSON.parse(done.newMessages.at(-1)?.text ?? ""), { name: "Paris", country: "FR" });
  const format = model.doStreamCalls[0]?.responseFormat;
  assert.equal(format?.type, "json");
  assert.deepEqual(format?.type === "json" ? format.schema?.required : undefined, ["name", "country"]);
});

test("structured output: a validator retry is turn_continued, then the next Step's valid answer ends the turn", async () => {
  const model = new MockLanguageModelV4({
    doStream: [textStream('{"name":"paris","country":"FR"}'), textStream('{"name":"Paris","country":"FR"}')],
  });
  const r = cityRunner(model);
  const first = await r.runModelStep(turn(undefined, [], [], undefined, "city of light?"));
  assert.ok(isTurnContinued(first));
  if (!isTurnContinued(first)) return;
  const stored = first.newMessages ?? [];
  assert.deepEqual(stored.map((m) => [m.role, m.text]), [
    [MessageRole.ASSISTANT, '{"name":"paris","country":"FR"}'],
    [MessageRole.USER, "Capitalize the city name."],
  ]);
  assert.equal(first.usage?.modelCalls, 1n);

  const second = await r.runModelStep(turn(first.frameworkRunState, [], [], undefined, "city of light?", stored));
  assert.ok(isTurnCompleted(second));
  if (!isTurnCompleted(second)) return;
  assert.deepEqual(second.newMessages.map((m) => [m.role, m.text]), [[MessageRole.ASSISTANT, '{"name":"Paris","country":"FR"}']]);
  // The retry's model call saw the bad answer and the retry prompt after the question.
  const prompt = model.doStreamCalls[1]?.prompt ?? [];
  assert.deepEqual(prompt.map((m) => m.role), ["user", "assistant", "user"]);
});

test("structured output: an answer that fails the schema is retried, and retries in a row are bounded", async () => {
  const model = new MockLanguageModelV4({
    doStream: [textStream("not json"), textStream('{"name":"Paris"}')],
  });
  const r = cityRunner(model, 1);
  const first = await r.runModelStep(turn(undefined, [], [], undefined, "city of light?"));
  assert.ok(isTurnContinued(first));
  if (!isTurnContinued(first)) return;
  const retry = first.newMessages?.at(-1);
  assert.equal(retry?.role, MessageRole.USER);
  assert.match(retry?.text ?? "", /could not parse the response/);

  const second = await r.runModelStep(
    turn(first.frameworkRunState, [], [], undefined, "city of light?", first.newMessages ?? []),
  );
  assert.ok(isTurnCompleted(second));
  if (!isTurnCompleted(second)) return;
  assert.match(second.turnError ?? "", /^the answer failed its output check 2 times in a row: No object generated: response did not match schema/);
});

test("describe() agrees with the runner's methods and gives each gap a reason", () => {
  const capabilities = describeRunner(Object.create(VercelAiRunner.prototype) as VercelAiRunner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size + CAPABILITIES.filter((c) => supports(capabilities, c)).length, CAPABILITIES.length);
  assert.match(reasons.get("handoffs") ?? "", /handoff/);
});
