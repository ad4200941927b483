import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentToolCallSchema,
  InteractionMode,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentToolCall,
  MessageRole,
} from "@dex-agents/contracts";
import {
  USER_REJECTED_RESULT,
  ToolExecutionError,
  type AgentTurnContext,
  CAPABILITIES,
  describeRunner,
  supports,
  toolResult,
  isTurnCompleted,
  isToolCallsRequested,
  policyOf,
} from "@dex-agents/core";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
  Type,
  type Context,
} from "@mariozechner/pi-ai";
import { PiRunner } from "./index.js";
import { deferredExecution as execution, storedUserMessage, testTurn } from "@dex-agents/core/testing";

const citySchema = Type.Object({ city: Type.String({ description: "A city name" }) });
const weather: AgentTool<typeof citySchema> = {
  name: "get_weather",
  label: "Weather",
  description: "The weather in a city",
  parameters: citySchema,
  execute: async (_id, params) => ({ content: [{ type: "text", text: `sunny in ${params.city}` }], details: {} }),
};
const bookTrip: AgentTool<typeof citySchema> = {
  name: "book_trip",
  label: "Book",
  description: "Books a trip",
  parameters: citySchema,
  execute: async (_id, params) => ({ content: [{ type: "text", text: `booked ${params.city}` }], details: {} }),
};
const failing: AgentTool<typeof citySchema> = {
  ...weather,
  name: "flaky",
  execute: async () => {
    throw new Error("the service is down");
  },
};

function turn(
  frameworkRunState: string | undefined,
  toolCalls: AgentToolCall[],
  events: AgentEventPayload[] = [],
  signal: AbortSignal = new AbortController().signal,
): AgentTurnContext {
  const prompt = "weather in Paris?";
  const messages = [storedUserMessage(prompt, JSON.stringify({ type: "user", text: prompt }))];
  return testTurn({ messages, frameworkRunState, toolCalls, events, signal });
}


test("a tool turn through pi-ai's faux provider: deferred call, Pi tool run, result fed back", async (t) => {
  const faux = registerFauxProvider();
  t.after(() => faux.unregister());
  const seen: Context[] = [];
  faux.setResponses([
    (context) => {
      seen.push(structuredClone(context));
      return fauxAssistantMessage(fauxToolCall("get_weather", { city: "Paris" }, { id: "w1" }), { stopReason: "toolUse" });
    },
    (context) => {
      seen.push(structuredClone(context));
      return fauxAssistantMessage("It is sunny in Paris.");
    },
  ]);
  const runner = new PiRunner({
    model: faux.getModel(),
    tools: [weather],
    toolPolicies: { get_weather: { effect: ToolEffect.READ } },
    instructions: "Be brief.",
  });
  const first = await runner.runModelStep(turn(undefined, []));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.deepEqual(first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]), [
    ["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }],
  ]);
  assert.equal(seen[0]?.systemPrompt, "Be brief.");
  assert.equal(first.modelCallMetadata?.providerName, "faux");

  const record = create(AgentToolCallSchema, { toolCallId: "w1", toolName: "get_weather", arguments: '{"city":"Paris"}' });
  const outcome = await runner.executeDeferredToolCall(execution(record));
  assert.deepEqual(outcome, toolResult("sunny in Paris"));

  const events: AgentEventPayload[] = [];
  const done = await runner.runModelStep(
    turn(first.frameworkRunState, [{ ...record, status: ToolCallStatus.SUCCEEDED, output: outcome.output }], events),
  );
  assert.ok(isTurnCompleted(done));
  const replayed = seen[1]?.messages ?? [];
  assert.deepEqual(replayed.map((m) => m.role), ["user", "assistant", "toolResult"]);
  const result = replayed[2];
  assert.ok(result?.role === "toolResult");
  assert.deepEqual([result.toolCallId, result.content], ["w1", [{ type: "text", text: "sunny in Paris" }]]);
  assert.deepEqual(done.newMessages.map((m) => [m.role, m.toolCallId, m.text ?? m.toolOutput]), [
    [MessageRole.ASSISTANT, "w1", undefined],
    [MessageRole.TOOL, "w1", "sunny in Paris"],
    [MessageRole.ASSISTANT, undefined, "It is sunny in Paris."],
  ]);
  // The faux provider streams the answer in several chunks, each a text_delta.
  const deltas = events.filter((e) => e.type === "text_delta").map((e) => (e.payload as { text: string }).text);
  assert.equal(deltas.join(""), "It is sunny in Paris.");
});

test("the model sees a Pi tool's TypeBox schema as its JSON schema", async (t) => {
  const faux = registerFauxProvider();
  t.after(() => faux.unregister());
  let tools: Context["tools"];
  faux.setResponses([
    (context) => {
      tools = structuredClone(context.tools);
      return fauxAssistantMessage("ok");
    },
  ]);
  const runner = new PiRunner({ model: faux.getModel(), tools: [weather, bookTrip] });
  await runner.runModelStep(turn(undefined, []));
  const expected = JSON.parse(JSON.stringify(citySchema)) as Record<string, unknown>;
  assert.deepEqual(expected, {
    type: "object",
    properties: { city: { type: "string", description: "A city name" } },
    required: ["city"],
  });
  assert.deepEqual(JSON.parse(JSON.stringify(tools)), [
    { name: "get_weather", description: "The weather in a city", parameters: expected },
    { name: "book_trip", description: "Books a trip", parameters: expected },
  ]);
});

test("an approval-gated write is deferred; the rejection is what the model sees", async (t) => {
  const faux = registerFauxProvider();
  t.after(() => faux.unregister());
  let last: Context["messages"][number] | undefined;
  faux.setResponses([
    fauxAssistantMessage([fauxText("Booking."), fauxToolCall("book_trip", { city: "Rome" }, { id: "k1" })], { stopReason: "toolUse" }),
    (context) => {
      last = context.messages.at(-1);
      return fauxAssistantMessage("Not booked.");
    },
  ]);
  const runner = new PiRunner({
    model: faux.getModel(),
    tools: [bookTrip],
    toolPolicies: { book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE } },
  });
  const first = await runner.runModelStep(turn(undefined, []));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.deepEqual(policyOf(first.toolCalls[0]!), { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true });
  const rejected = create(AgentToolCallSchema, { toolCallId: "k1", toolName: "book_trip", status: ToolCallStatus.REJECTED });
  const done = await runner.runModelStep(turn(first.frameworkRunState, [rejected]));
  assert.ok(isTurnCompleted(done));
  assert.ok(last?.role === "toolResult");
  assert.deepEqual(last.content, [{ type: "text", text: USER_REJECTED_RESULT }]);
  assert.deepEqual(done.newMessages.map((m) => m.text ?? m.toolOutput ?? m.toolCallId), [
    "Booking.",
    "k1",
    USER_REJECTED_RESULT,
    "Not booked.",
  ]);
});

test("Pi tool failures and invalid arguments are model-visible ToolExecutionErrors", async () => {
  const faux = registerFauxProvider();
  try {
    const runner = new PiRunner({ model: faux.getModel(), tools: [weather, failing] });
    const bad = create(AgentToolCallSchema, { toolCallId: "x", toolName: "get_weather", arguments: '{"town":1}' });
    await assert.rejects(runner.executeDeferredToolCall(execution(bad)), (e) => e instanceof ToolExecutionError && /city/.test(e.message));
    const down = create(AgentToolCallSchema, { toolCallId: "y", toolName: "flaky", arguments: '{"city":"Oslo"}' });
    await assert.rejects(runner.executeDeferredToolCall(execution(down)), (e) => e instanceof ToolExecutionError && e.message === "the service is down");
  } finally {
    faux.unregister();
  }
});

test("cancellationSignal aborts a streaming pi-ai call", async (t) => {
  const faux = registerFauxProvider({ tokensPerSecond: 20 });
  t.after(() => faux.unregister());
  faux.setResponses([fauxAssistantMessage("a long answer ".repeat(50))]);
  const runner = new PiRunner({ model: faux.getModel() });
  const controller = new AbortController();
  const events: AgentEventPayload[] = [];
  const running = runner.runModelStep(turn(undefined, [], events, controller.signal));
  const deadline = Date.now() + 5_000;
  while (events.length === 0) {
    assert.ok(Date.now() < deadline, "no text_delta arrived");
    await new Promise((resolve) => setImmediate(resolve));
  }
  const started = Date.now();
  controller.abort(new Error("cancel_turn"));
  await assert.rejects(running, /cancel_turn/);
  assert.ok(Date.now() - started < 2_000, "the call did not stop promptly");
});

test("a planning turn hands pi-ai only write_todos, with the built-in's JSON schema, and the plan note", async (t) => {
  const faux = registerFauxProvider();
  t.after(() => faux.unregister());
  let seen: Context | undefined;
  faux.setResponses([
    (context) => {
      seen = structuredClone(context);
      return fauxAssistantMessage(fauxToolCall("write_todos", { todos: [{ content: "pack", status: "pending" }] }, { id: "p1" }), {
        stopReason: "toolUse",
      });
    },
  ]);
  const runner = new PiRunner({ model: faux.getModel(), tools: [weather] });
  assert.equal(runner.supportsPlanMode, true);
  const planning = { ...turn(undefined, []), interactionMode: InteractionMode.PLANNING, enabledBuiltInTools: ["write_todos"] };
  const outcome = await runner.runModelStep(planning);
  assert.ok(isToolCallsRequested(outcome));
  if (!isToolCallsRequested(outcome)) return;
  assert.deepEqual(outcome.toolCalls.map((c) => [c.toolName, policyOf(c!)]), [["write_todos", { effect: ToolEffect.READ, requiresApproval: false }]]);
  assert.deepEqual(seen?.tools?.map((tool) => tool.name), ["write_todos"]);
  assert.deepEqual((seen?.tools?.[0]?.parameters as { required?: string[] }).required, ["todos"]);
  const first = seen?.messages[0];
  assert.ok(first?.role === "user" && typeof first.content === "string" && first.content.startsWith("[Dex] There is no plan yet."));
});

test("toolPolicies must name the runner's tools", () => {
  const faux = registerFauxProvider();
  try {
    assert.throws(
      () => new PiRunner({ model: faux.getModel(), tools: [weather], toolPolicies: { nope: { effect: ToolEffect.READ } } }),
      /toolPolicies names "nope"/,
    );
  } finally {
    faux.unregister();
  }
});

test("describe() agrees with the runner's methods and gives each gap a reason", () => {
  const capabilities = describeRunner(Object.create(PiRunner.prototype) as PiRunner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size + CAPABILITIES.filter((c) => supports(capabilities, c)).length, CAPABILITIES.length);
  assert.match(reasons.get("mcp_sources") ?? "", /no tool sources/);
  assert.match(reasons.get("structured_output") ?? "", /no output definition/);
});
