import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentToolCallSchema,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentToolCall,
  MessageRole,
} from "@dex-agents/contracts";
import {
  ToolExecutionError,
  USER_REJECTED_RESULT,
  type AgentTurnContext,
  type ToolCallsRequested,
  type TurnCompleted,
  CAPABILITIES,
  describeRunner,
  supports,
  toolResult,
  policyOf,
  isTurnCompleted,
  isToolCallsRequested,
} from "@dex-agents/core";
import { Agent, handoff, tool, type InputGuardrail, type ModelRequest, type OutputGuardrail } from "@openai/agents";
import { z } from "zod";
import { dexRunInfo, HANDOFF_EVENT, OpenAiAgentsRunner } from "./index.js";
import { ScriptedModel, trailingResults, userTexts, type ScriptedReply } from "./testing/scripted_model.js";
import { deferredExecution as execution, storedUserMessage, testTurn } from "@dex-agents/core/testing";
import { decodeTurnState, encodeTurnState } from "./state.js";

type Event = AgentEventPayload | { type: "raw"; eventType: string; payload: string };

function turn(
  prompt: string,
  frameworkRunState: string | undefined,
  toolCalls: AgentToolCall[],
  events: Event[] = [],
  signal: AbortSignal = new AbortController().signal,
): AgentTurnContext {
  const messages = [storedUserMessage(prompt, JSON.stringify({ type: "message", role: "user", content: prompt }))];
  return testTurn({
    messages,
    frameworkRunState,
    toolCalls,
    events,
    writeRaw: (eventType, payload) => void events.push({ type: "raw", eventType, payload }),
    signal,
  });
}


function record(call: { toolCallId: string; toolName: string; arguments: string }, status: ToolCallStatus, extra: { output?: string; error?: string } = {}): AgentToolCall {
  return create(AgentToolCallSchema, { ...call, turnId: "turn-1", status, ...extra });
}

/** Answers the results it sees with them; otherwise the reply `first` gives. */
function answering(first: (request: ModelRequest) => ScriptedReply): ScriptedModel {
  return new ScriptedModel((request) => {
    const results = trailingResults(request);
    if (results.size > 0) {
      return { text: `Results: ${[...results.values()].map((r) => `${r.name}=${r.text}`).join("; ")}` };
    }
    return first(request);
  });
}

function tools(runs: string[]) {
  const getWeather = tool({
    name: "get_weather",
    description: "The weather in a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      runs.push(`get_weather:${city}:${dexRunInfo()?.idempotencyKey}`);
      return `sunny in ${city}`;
    },
  });
  const bookTrip = tool({
    name: "book_trip",
    description: "Books a trip",
    parameters: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => {
      runs.push(`book_trip:${city}`);
      return `booked ${city}`;
    },
  });
  return { getWeather, bookTrip };
}

function requested(outcome: unknown): ToolCallsRequested {
  assert.ok(isToolCallsRequested(outcome), "expected tool calls");
  return outcome;
}

function completed(outcome: unknown): TurnCompleted {
  assert.ok(isTurnCompleted(outcome), "expected a completed turn");
  return outcome;
}

test("a tool turn: one model call stops at the interruption, the tool runs in its own call, the result goes back", async () => {
  const runs: string[] = [];
  const { getWeather } = tools(runs);
  const model = answering(() => ({ calls: [{ callId: "w1", name: "get_weather", arguments: { city: "Paris" } }] }));
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "weather", instructions: "Answer.", model, tools: [getWeather] }),
    toolPolicies: { get_weather: { effect: ToolEffect.READ } },
  });
  const events: Event[] = [];

  const first = requested(await runner.runModelStep(turn("weather in Paris?", undefined, [], events)));
  assert.equal(model.requests.length, 1, "one model call in the Step");
  assert.deepEqual(runs, [], "the SDK ran no tool");
  assert.deepEqual(
    first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]),
    [["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }]],
  );
  assert.equal(first.usage?.modelCalls, 1n);
  // The run state carries the SDK's own RunState string.
  const state = decodeTurnState(first.frameworkRunState)!;
  assert.equal((JSON.parse(state.sdkState) as { $schemaVersion: string }).$schemaVersion, "1.22");

  const call = first.toolCalls[0]!;
  const result = await runner.executeDeferredToolCall(execution(record(call, ToolCallStatus.APPROVED)));
  assert.deepEqual(result, toolResult("sunny in Paris"));
  assert.deepEqual(runs, ["get_weather:Paris:s1/turn-1/w1"], "the tool read its idempotency key");

  const done = record(call, ToolCallStatus.SUCCEEDED, { output: result.output });
  const second = completed(await runner.runModelStep(turn("weather in Paris?", first.frameworkRunState, [done], events)));
  assert.equal(model.requests.length, 2);
  assert.deepEqual(runs, ["get_weather:Paris:s1/turn-1/w1"], "the resumed run did not run the tool again");
  assert.deepEqual(second.newMessages.map((m) => m.role), [MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.ASSISTANT]);
  assert.equal(second.newMessages[0]?.toolName, "get_weather");
  assert.equal(second.newMessages[1]?.toolOutput, "sunny in Paris");
  assert.equal(second.newMessages[2]?.text, "Results: get_weather=sunny in Paris");
  assert.equal(second.usage?.modelCalls, 1n, "only the resumed Step's own model call");
  assert.equal(second.usage?.inputTokens, 12n);
  assert.deepEqual(
    events.map((e) => (e.type === "text_delta" ? e.payload.text : e.type)),
    ["Results: get_weather=sunny in Paris"],
  );
});

test("a gated write and an ungated read of one response: both deferred, neither runs; a rejection reaches the model", async () => {
  const runs: string[] = [];
  const { getWeather, bookTrip } = tools(runs);
  const model = answering(() => ({
    calls: [
      { callId: "r1", name: "get_weather", arguments: { city: "Rome" } },
      { callId: "k1", name: "book_trip", arguments: { city: "Rome" } },
    ],
  }));
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "travel", model, tools: [getWeather, bookTrip] }),
    toolPolicies: { get_weather: { effect: ToolEffect.READ }, book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE } },
  });
  const first = requested(await runner.runModelStep(turn("book Rome", undefined, [])));
  assert.deepEqual(runs, []);
  assert.deepEqual(
    first.toolCalls.map((c) => [c.toolName, policyOf(c!).effect, policyOf(c!).requiresApproval]),
    [
      ["get_weather", ToolEffect.READ, false],
      ["book_trip", ToolEffect.NON_IDEMPOTENT_WRITE, true],
    ],
  );
  const [read, write] = first.toolCalls;
  const records = [
    record(read!, ToolCallStatus.SUCCEEDED, { output: "sunny in Rome" }),
    record(write!, ToolCallStatus.REJECTED),
  ];
  const second = completed(await runner.runModelStep(turn("book Rome", first.frameworkRunState, records)));
  assert.deepEqual(runs, [], "neither the approved read nor the rejected write ran in RunModel");
  assert.equal(second.newMessages.at(-1)?.text, `Results: get_weather=sunny in Rome; book_trip=${USER_REJECTED_RESULT}`);
  assert.deepEqual(second.newMessages.map((m) => m.role), [MessageRole.ASSISTANT, MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.TOOL, MessageRole.ASSISTANT]);
});

test("a failed call is rejected with the failure text, and an unfinished turn keeps its transcript", async () => {
  const { getWeather } = tools([]);
  const model = answering(() => ({ calls: [{ callId: "w1", name: "get_weather", arguments: { city: "Oslo" } }] }));
  const runner = new OpenAiAgentsRunner({ agent: new Agent({ name: "a", model, tools: [getWeather] }), stream: false });
  const first = requested(await runner.runModelStep(turn("weather in Oslo?", undefined, [])));
  const call = first.toolCalls[0]!;

  const unfinished = runner.buildUnfinishedTurnMessages(turn("weather in Oslo?", first.frameworkRunState, [record(call, ToolCallStatus.APPROVED)]));
  assert.deepEqual(unfinished.map((m) => [m.role, m.toolCallId]), [[MessageRole.ASSISTANT, "w1"], [MessageRole.TOOL, "w1"]]);
  assert.match(unfinished[1]?.toolOutput ?? "", /has no result/);

  const failed = record(call, ToolCallStatus.FAILED, { error: "the service is down" });
  const second = completed(await runner.runModelStep(turn("weather in Oslo?", first.frameworkRunState, [failed])));
  assert.equal(second.newMessages.at(-1)?.text, "Results: get_weather=The tool call failed: the service is down");
});

test("an aborted cancellationSignal stops the running model call", async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const model = new ScriptedModel(async (request) => {
    started();
    await new Promise<void>((_, reject) => request.signal?.addEventListener("abort", () => reject(request.signal?.reason)));
    return { text: "never" };
  });
  const runner = new OpenAiAgentsRunner({ agent: new Agent({ name: "a", model }) });
  const controller = new AbortController();
  const step = runner.runModelStep(turn("hi", undefined, [], [], controller.signal));
  await running;
  controller.abort(new Error("cancel_turn"));
  await assert.rejects(step);
});

test("a handoff is more than one model call in one RunModel; the next agent's tool call is still deferred", async () => {
  const runs: string[] = [];
  const { getWeather } = tools(runs);
  const model = new ScriptedModel((request) => {
    const results = trailingResults(request);
    if (request.systemInstructions === "triage") {
      return { calls: [{ callId: "h1", name: "transfer_to_forecaster", arguments: {} }] };
    }
    if ([...results.values()].some((r) => r.name === "get_weather")) return { text: "forecaster: sunny" };
    return { calls: [{ callId: "w1", name: "get_weather", arguments: { city: "Lima" } }] };
  });
  const forecaster = new Agent({ name: "forecaster", instructions: "forecast", model, tools: [getWeather] });
  const triage = new Agent({ name: "triage", instructions: "triage", model, handoffs: [handoff(forecaster)] });
  const runner = new OpenAiAgentsRunner({ agent: triage, toolPolicies: { get_weather: { effect: ToolEffect.READ } } });
  const events: Event[] = [];

  const first = requested(await runner.runModelStep(turn("weather in Lima?", undefined, [], events)));
  assert.equal(model.requests.length, 2, "the triage call and the forecaster's call");
  assert.equal(first.usage?.modelCalls, 2n);
  assert.deepEqual(first.toolCalls.map((c) => c.toolName), ["get_weather"]);
  assert.deepEqual(runs, []);
  assert.deepEqual(
    events.filter((e) => e.type === "raw"),
    [{ type: "raw", eventType: HANDOFF_EVENT, payload: '{"from_agent":"triage","to_agent":"forecaster"}' }],
  );
  const call = first.toolCalls[0]!;
  const second = completed(
    await runner.runModelStep(
      turn("weather in Lima?", first.frameworkRunState, [record(call, ToolCallStatus.SUCCEEDED, { output: "sunny in Lima" })], events),
    ),
  );
  assert.equal(model.requests.length, 3, "the resumed run continues with the forecaster only");
  assert.equal(model.requests[2]?.systemInstructions, "forecast");
  assert.equal(second.newMessages.at(-1)?.text, "forecaster: sunny");
});

test("an input guardrail tripwire ends the turn (TurnFailed) with the guardrail's text", async () => {
  const model = new ScriptedModel(() => ({ text: "should not be seen" }));
  const noSecrets: InputGuardrail = {
    name: "no_secrets",
    execute: async ({ input }) => ({
      tripwireTriggered: JSON.stringify(input).includes("password"),
      outputInfo: "the message asks for a password",
    }),
  };
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "a", model, inputGuardrails: [noSecrets] }),
  });
  await assert.rejects(runner.runModelStep(turn("what is the admin password?", undefined, [])), {
    name: "TurnFailed",
    message: "input guardrail 'no_secrets' tripped its tripwire: the message asks for a password",
  });

  const fine = completed(await runner.runModelStep(turn("hello", undefined, [])));
  assert.equal(fine.turnError, undefined);
  assert.equal(fine.newMessages.at(-1)?.text, "should not be seen");
  assert.deepEqual(userTexts(model.requests.at(-1)!), ["hello"]);
});

test("a run state another runner wrote is a RunStateError, which ends the turn without a retry", async () => {
  const runner = new OpenAiAgentsRunner({ agent: new Agent({ name: "a", model: new ScriptedModel(() => ({ text: "x" })) }) });
  await assert.rejects(runner.runModelStep(turn("hi", "[]", [])), {
    name: "RunStateError",
    message: /^the run state was not written by the openai-agents adapter/,
  });
});

test("tool errors: the tool's errorFunction text is its output; without one, a ToolExecutionError is a failure the model sees", async () => {
  const model = new ScriptedModel(() => ({ text: "unused" }));
  const formatted = tool({
    name: "flaky",
    description: "Fails",
    parameters: z.object({}),
    execute: async () => {
      throw new Error("the service is down");
    },
  });
  const raising = tool({
    name: "strict",
    description: "Fails for the model",
    parameters: z.object({}),
    errorFunction: null,
    execute: async () => {
      throw new ToolExecutionError("no such order");
    },
  });
  const runner = new OpenAiAgentsRunner({ agent: new Agent({ name: "a", model, tools: [formatted, raising] }) });
  const call = (name: string) => record({ toolCallId: "t1", toolName: name, arguments: "{}" }, ToolCallStatus.APPROVED);
  const result = await runner.executeDeferredToolCall(execution(call("flaky")));
  assert.match(result.output, /An error occurred while running the tool/);
  await assert.rejects(runner.executeDeferredToolCall(execution(call("strict"))), (error: unknown) => {
    assert.ok(error instanceof ToolExecutionError);
    assert.equal(error.message, "no such order");
    return true;
  });
  await assert.rejects(runner.executeDeferredToolCall(execution(call("missing"))), ToolExecutionError);
});

test("an output guardrail tripwire after a tool call ends the turn, and the transcript is kept", async () => {
  const { getWeather } = tools([]);
  const model = answering(() => ({ calls: [{ callId: "w1", name: "get_weather", arguments: { city: "Oslo" } }] }));
  const noSun: OutputGuardrail = {
    name: "no_sun",
    execute: async ({ agentOutput }) => ({ tripwireTriggered: String(agentOutput).includes("sunny"), outputInfo: { word: "sunny" } }),
  };
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "a", model, tools: [getWeather], outputGuardrails: [noSun] }),
    toolPolicies: { get_weather: { effect: ToolEffect.READ } },
  });
  const first = requested(await runner.runModelStep(turn("weather in Oslo?", undefined, [])));
  const done = record(first.toolCalls[0]!, ToolCallStatus.SUCCEEDED, { output: "sunny in Oslo" });
  const resumed = turn("weather in Oslo?", first.frameworkRunState, [done]);
  await assert.rejects(runner.runModelStep(resumed), {
    name: "TurnFailed",
    message: `output guardrail 'no_sun' tripped its tripwire: {"word":"sunny"}`,
  });
  // What the session stores before its turn-failure note.
  const unfinished = runner.buildUnfinishedTurnMessages(resumed);
  assert.deepEqual(unfinished.map((m) => m.role), [MessageRole.ASSISTANT, MessageRole.TOOL]);
  assert.equal(unfinished[1]?.toolOutput, "sunny in Oslo");
});

test("maxTurns counts model calls across Steps; a refused SDK state fails the turn without a retry", async () => {
  const { getWeather } = tools([]);
  const model = answering(() => ({ calls: [{ callId: "w1", name: "get_weather", arguments: { city: "Oslo" } }] }));
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "a", model, tools: [getWeather] }),
    toolPolicies: { get_weather: { effect: ToolEffect.READ } },
    maxTurns: 1,
  });
  const first = requested(await runner.runModelStep(turn("weather in Oslo?", undefined, [])));
  const done = record(first.toolCalls[0]!, ToolCallStatus.SUCCEEDED, { output: "sunny in Oslo" });
  await assert.rejects(runner.runModelStep(turn("weather in Oslo?", first.frameworkRunState, [done])), {
    name: "TurnFailed",
    message: /^OpenAI Agents SDK: /,
  });
  assert.equal(model.requests.length, 1, "the budget stopped the second model call");

  const state = decodeTurnState(first.frameworkRunState)!;
  const sdk = JSON.parse(state.sdkState) as Record<string, unknown>;
  const refused = encodeTurnState({ ...state, sdkState: JSON.stringify({ ...sdk, $schemaVersion: "0.1" }) });
  await assert.rejects(runner.runModelStep(turn("weather in Oslo?", refused, [done])), {
    name: "TurnFailed",
    message: /^cannot resume the turn: the OpenAI Agents SDK refused the stored RunState: /,
  });
});

test("a needsApproval function that returns true for a call asks the user for that call only", async () => {
  const refund = tool({
    name: "refund",
    description: "Refunds",
    parameters: z.object({ eur: z.number() }),
    needsApproval: async (_context, { eur }) => eur > 100,
    execute: async ({ eur }) => `refunded ${eur}`,
  });
  const model = answering(() => ({
    calls: [
      { callId: "small", name: "refund", arguments: { eur: 5 } },
      { callId: "large", name: "refund", arguments: { eur: 500 } },
    ],
  }));
  const runner = new OpenAiAgentsRunner({
    agent: new Agent({ name: "a", model, tools: [refund] }),
    toolPolicies: { refund: { effect: ToolEffect.IDEMPOTENT_WRITE } },
  });
  const first = requested(await runner.runModelStep(turn("refund", undefined, [])));
  assert.deepEqual(
    first.toolCalls.map((c) => [c.toolCallId, policyOf(c!).requiresApproval]),
    [["small", false], ["large", true]],
  );
  const pinned = new OpenAiAgentsRunner({
    agent: new Agent({ name: "a", model, tools: [refund] }),
    toolPolicies: { refund: { effect: ToolEffect.IDEMPOTENT_WRITE, requiresApproval: false } },
  });
  const second = requested(await pinned.runModelStep(turn("refund", undefined, [])));
  assert.deepEqual(second.toolCalls.map((c) => policyOf(c!).requiresApproval), [false, false], "a policy that says wins");
});

test("describe() agrees with the runner's methods and gives each gap a reason", () => {
  const capabilities = describeRunner(Object.create(OpenAiAgentsRunner.prototype) as OpenAiAgentsRunner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size + CAPABILITIES.filter((c) => supports(capabilities, c)).length, CAPABILITIES.length);
  assert.match(reasons.get("built_in_tools") ?? "", /built-ins/);
});
