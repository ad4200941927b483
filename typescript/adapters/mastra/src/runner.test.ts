// MastraRunner on the real @mastra/core with ai's MockLanguageModelV4 as the
// agent's model: one agent.stream call per RunModel Step, the calls handed
// back unrun, each run by the session through the Mastra tool's execute.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentToolCallSchema,
  InteractionMode,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  MessageRole,
} from "@dex-agents/contracts";
import {
  ToolExecutionError,
  CAPABILITIES,
  describeRunner,
  supports,
  toolResult,
  isTurnCompleted,
  isToolCallsRequested,
  isTurnContinued,
  policyOf,
} from "@dex-agents/core";
import { aiSdkStreamResponse, deferredExecution, storedUserMessage, testTurn } from "@dex-agents/core/testing";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { MockMemory } from "@mastra/core/memory";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";
import { AgentOwnedToolsError, dexToolCall, MastraMemoryError, MastraRunner, type MastraAgent, type MastraTool } from "./index.js";

type Options = Parameters<MockLanguageModelV4["doStream"]>[0];

const runs: string[] = [];
const weather = createTool({
  id: "get_weather",
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }, context) => {
    runs.push(`${city} (${dexToolCall(context)?.idempotencyKey ?? "no Dex call"})`);
    return `sunny in ${city}`;
  },
});
const flaky = createTool({
  id: "flaky",
  description: "A tool whose service is down",
  inputSchema: z.object({}),
  execute: async () => {
    throw new Error("the service is down");
  },
});

/** The mock as the agent's model; see mastra_contract.test.ts for why the cast. */
function agentOn(model: MockLanguageModelV4, extra: { memory?: MockMemory; tools?: Record<string, MastraTool> } = {}): MastraAgent {
  return new Agent({ id: "trip", name: "trip", instructions: "Be brief.", model: model as unknown as MastraModelConfig, ...extra });
}

function turn(options: Omit<Parameters<typeof testTurn>[0], "messages"> = {}) {
  const prompt = "weather in Paris?";
  return testTurn({ messages: [storedUserMessage(prompt, JSON.stringify({ type: "user", text: prompt }))], ...options });
}

function deltas(events: readonly AgentEventPayload[]): string {
  return events.flatMap((e) => (e.type === "text_delta" ? [(e.payload as { text: string }).text] : [])).join("");
}

test("a tool turn: one model call per Step, the call handed back unrun, its result reaching the model", async () => {
  const seen: Options[] = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      seen.push(options);
      return seen.length === 1
        ? aiSdkStreamResponse("Checking.", [{ id: "w1", name: "get_weather", input: { city: "Paris" } }])
        : aiSdkStreamResponse("It is sunny in Paris.");
    },
  });
  const runner = new MastraRunner({
    agent: agentOn(model),
    tools: { get_weather: weather },
    toolPolicies: { get_weather: { effect: ToolEffect.READ } },
  });
  runs.length = 0;
  const firstEvents: AgentEventPayload[] = [];
  const first = await runner.runModelStep(turn({ events: firstEvents }));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.equal(seen.length, 1);
  assert.deepEqual(runs, [], "Mastra ran the tool itself");
  assert.deepEqual(first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]), [
    ["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }],
  ]);
  assert.equal(deltas(firstEvents), "Checking.");
  // The agent's instructions reach the model; the tool as its JSON schema, no execute.
  assert.deepEqual(seen[0]?.prompt[0], { role: "system", content: "Be brief." });
  const offered = seen[0]?.tools?.[0];
  assert.ok(offered?.type === "function");
  assert.deepEqual([offered.name, (offered.inputSchema as { required?: string[] }).required], ["get_weather", ["city"]]);

  const record = create(AgentToolCallSchema, { toolCallId: "w1", toolName: "get_weather", arguments: '{"city":"Paris"}' });
  const outcome = await runner.executeDeferredToolCall(deferredExecution(record));
  assert.deepEqual(outcome, toolResult("sunny in Paris"));
  assert.deepEqual(runs, ["Paris (s1/turn-1/w1)"], "the tool did not see its Dex call");

  const events: AgentEventPayload[] = [];
  const done = await runner.runModelStep(
    turn({
      frameworkRunState: first.frameworkRunState,
      toolCalls: [{ ...record, status: ToolCallStatus.SUCCEEDED, output: outcome.output }],
      events,
    }),
  );
  assert.ok(isTurnCompleted(done));
  if (!isTurnCompleted(done)) return;
  assert.equal(seen.length, 2);
  const last = seen[1]?.prompt.at(-1);
  assert.ok(last?.role === "tool");
  assert.deepEqual(
    last.content.map((p) => (p.type === "tool-result" ? [p.toolCallId, p.output] : [p.type])),
    [["w1", { type: "text", value: "sunny in Paris" }]],
  );
  assert.equal(deltas(events), "It is sunny in Paris.");
  assert.deepEqual(done.newMessages.map((m) => [m.role, m.toolCallId, m.text ?? m.toolOutput]), [
    [MessageRole.ASSISTANT, undefined, "Checking."],
    [MessageRole.ASSISTANT, "w1", undefined],
    [MessageRole.TOOL, "w1", "sunny in Paris"],
    [MessageRole.ASSISTANT, undefined, "It is sunny in Paris."],
  ]);
});

test("a failing model call surfaces once: the SDK does not retry it, the RunModel Step does", async () => {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doStream: async () => {
      calls += 1;
      throw new Error("model unavailable");
    },
  });
  const runner = new MastraRunner({ agent: agentOn(model), tools: { get_weather: weather } });
  await assert.rejects(runner.runModelStep(turn()), /model unavailable/);
  assert.equal(calls, 1);
});

test("cancellationSignal aborts the running agent.stream call", async () => {
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const model = new MockLanguageModelV4({
    doStream: (options) =>
      new Promise((_resolve, reject) => {
        started();
        options.abortSignal?.addEventListener("abort", () => reject(options.abortSignal?.reason), { once: true });
      }),
  });
  const runner = new MastraRunner({ agent: agentOn(model) });
  const controller = new AbortController();
  const step = runner.runModelStep(turn({ signal: controller.signal }));
  await running;
  const aborted = Date.now();
  controller.abort(new Error("cancel_turn"));
  await assert.rejects(step, /cancel_turn/);
  assert.ok(Date.now() - aborted < 2_000, "the call did not stop promptly");
});

test("an agent with Mastra memory is refused: the session owns the history", () => {
  const model = new MockLanguageModelV4();
  assert.throws(
    () => new MastraRunner({ agent: agentOn(model, { memory: new MockMemory() }) }),
    (e) => e instanceof MastraMemoryError && /"trip" has memory/.test(e.message),
  );
});

test("tools configured on the agent itself are refused at the first model call, by name", async () => {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doStream: async () => {
      calls += 1;
      return aiSdkStreamResponse("unreachable");
    },
  });
  const runner = new MastraRunner({ agent: agentOn(model, { tools: { get_weather: weather, flaky } }) });
  await assert.rejects(
    runner.runModelStep(turn()),
    (e) => e instanceof AgentOwnedToolsError && /tools of its own \(get_weather, flaky\)/.test(e.message),
  );
  assert.equal(calls, 0);
});

test("a tool's throw and input its schema refuses are model-visible ToolExecutionErrors", async () => {
  const runner = new MastraRunner({ agent: agentOn(new MockLanguageModelV4()), tools: { get_weather: weather, flaky } });
  const bad = create(AgentToolCallSchema, { toolCallId: "x", toolName: "get_weather", arguments: '{"city":3}' });
  await assert.rejects(
    runner.executeDeferredToolCall(deferredExecution(bad)),
    (e) => e instanceof ToolExecutionError && /city/.test(e.message),
  );
  const down = create(AgentToolCallSchema, { toolCallId: "y", toolName: "flaky", arguments: "{}" });
  await assert.rejects(
    runner.executeDeferredToolCall(deferredExecution(down)),
    (e) => e instanceof ToolExecutionError && e.message === "the service is down",
  );
});

test("planningToolChoice required forces write_todos through Mastra's toolChoice", async () => {
  let seen: Options | undefined;
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      seen = options;
      return aiSdkStreamResponse(undefined, [
        { id: "p1", name: "write_todos", input: { todos: [{ content: "pack", status: "pending" }] } },
      ]);
    },
  });
  const runner = new MastraRunner({ agent: agentOn(model), tools: { get_weather: weather }, planningToolChoice: "required" });
  const planning = { ...turn(), interactionMode: InteractionMode.PLANNING, enabledBuiltInTools: ["write_todos"] };
  const outcome = await runner.runModelStep(planning);
  assert.ok(isToolCallsRequested(outcome));
  assert.deepEqual(seen?.toolChoice, { type: "tool", toolName: "write_todos" });
  assert.deepEqual(seen?.tools?.map((t) => t.name), ["write_todos"]);
});

test("toolPolicies must name the runner's tools", () => {
  assert.throws(
    () =>
      new MastraRunner({
        agent: agentOn(new MockLanguageModelV4()),
        tools: { get_weather: weather },
        toolPolicies: { nope: { effect: ToolEffect.READ } },
      }),
    /toolPolicies names "nope"/,
  );
});

test("describe() agrees with the runner's methods and gives each gap a reason", () => {
  const capabilities = describeRunner(Object.create(MastraRunner.prototype) as MastraRunner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size + CAPABILITIES.filter((c) => supports(capabilities, c)).length, CAPABILITIES.length);
  assert.ok(supports(capabilities, "structured_output"));
  assert.match(reasons.get("mcp_sources") ?? "", /no tool sources/);
});

// --- structured output (Mastra's `structuredOutput`) --------------------------------

const citySchema = z.object({ name: z.string(), country: z.string() });

function cityRunner(model: MockLanguageModelV4, maxRetries?: number): MastraRunner {
  return new MastraRunner({
    agent: agentOn(model),
    tools: { get_weather: weather },
    output: {
      schema: citySchema,
      validate: (city: z.infer<typeof citySchema>) =>
        city.name === city.name.charAt(0).toUpperCase() + city.name.slice(1) ? undefined : "Capitalize the city name.",
      ...(maxRetries !== undefined ? { maxRetries } : {}),
    },
  });
}

test("structured output: the schema goes to the model as its response format, a valid answer ends the turn", async () => {
  const seen: Options[] = [];
  const model = new MockLanguageModelV4({
    doStream: async (options) => {
      seen.push(options);
      return aiSdkStreamResponse('{"name":"Paris","country":"FR"}');
    },
  });
  const done = await cityRunner(model).runModelStep(turn());
  assert.ok(isTurnCompleted(done));
  if (!isTurnCompleted(done)) return;
  assert.equal(done.turnError, undefined);
  assert.deepEqual(JSON.parse(done.newMessages.at(-1)?.text ?? ""), { name: "Paris", country: "FR" });
  const format = seen[0]?.responseFormat;
  assert.equal(format?.type, "json");
  assert.deepEqual(format?.type === "json" ? format.schema?.["required"] : undefined, ["name", "country"]);
  // The tools are still offered beside the response format.
  assert.deepEqual(seen[0]?.tools?.map((t) => t.name), ["get_weather"]);
});

test("structured output: a tool call is no answer yet; a validator retry is turn_continued, then the answer ends the turn", async () => {
  let call = 0;
  const model = new MockLanguageModelV4({
    doStream: async () => {
      call += 1;
      if (call === 1) return aiSdkStreamResponse(undefined, [{ id: "w1", name: "get_weather", input: { city: "Paris" } }]);
      return aiSdkStreamResponse(call === 2 ? '{"name":"paris","country":"FR"}' : '{"name":"Paris","country":"FR"}');
    },
  });
  const r = cityRunner(model);
  const first = await r.runModelStep(turn());
  assert.ok(isToolCallsRequested(first), "Mastra's schema check of a tool-call step must not fail it");
  if (!isToolCallsRequested(first)) return;
  const record = create(AgentToolCallSchema, {
    toolCallId: "w1",
    toolName: "get_weather",
    arguments: '{"city":"Paris"}',
    status: ToolCallStatus.SUCCEEDED,
    output: "sunny in Paris",
  });
  const second = await r.runModelStep(turn({ frameworkRunState: first.frameworkRunState, toolCalls: [record] }));
  assert.ok(isTurnContinued(second));
  if (!isTurnContinued(second)) return;
  assert.deepEqual(second.newMessages?.slice(-2).map((m) => [m.role, m.text]), [
    [MessageRole.ASSISTANT, '{"name":"paris","country":"FR"}'],
    [MessageRole.USER, "Capitalize the city name."],
  ]);
  const third = await r.runModelStep(turn({ frameworkRunState: second.frameworkRunState }));
  assert.ok(isTurnCompleted(third));
  if (!isTurnCompleted(third)) return;
  assert.deepEqual(third.newMessages.map((m) => [m.role, m.text]), [[MessageRole.ASSISTANT, '{"name":"Paris","country":"FR"}']]);
});

test("structured output: an answer Mastra's schema check refuses is retried, and retries in a row are bounded", async () => {
  const answers = ["not json", '{"name":"Paris"}'];
  const model = new MockLanguageModelV4({ doStream: async () => aiSdkStreamResponse(answers.shift()) });
  const r = cityRunner(model, 1);
  const first = await r.runModelStep(turn());
  assert.ok(isTurnContinued(first));
  if (!isTurnContinued(first)) return;
  const retry = first.newMessages?.at(-1);
  assert.equal(retry?.role, MessageRole.USER);
  assert.match(retry?.text ?? "", /^Structured output validation failed: .* Answer again with only the JSON/);
  const second = await r.runModelStep(turn({ frameworkRunState: first.frameworkRunState }));
  assert.ok(isTurnCompleted(second));
  if (!isTurnCompleted(second)) return;
  assert.match(second.turnError ?? "", /^the answer failed its output check 2 times in a row: Structured output validation failed: - country/);
});
