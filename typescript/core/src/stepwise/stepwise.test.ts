import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  AgentPlanSchema,
  AgentPlanTaskSchema,
  AgentToolCallSchema,
  InteractionMode,
  MessageRole,
  PlanStatus,
  PlanTaskStatus,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentMessage,
  type AgentPlan,
  type AgentToolCall,
} from "@dex-agents/contracts";
import { USER_REJECTED_RESULT } from "../results.js";
import type { AgentTurnContext, FrameworkMessage, TurnCompleted } from "../runner.js";
import {
  AgentDefinition,
  MAX_CONSECUTIVE_CONTINUATIONS,
  StepwiseRunner,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
} from "./index.js";
import { deferredExecution as execution } from "../testing/executions.js";
import { testTurn } from "../testing/turns.js";
import { RunStateError } from "../errors.js";
import { decodeRunState, encodeRunState, stepwiseRunStateFormat } from "./state.js";
import { frameworkMessage, isToolCallsRequested, isTurnCompleted, isTurnContinued, policyOf, toolResult } from "../values.js";

/** A model that answers from a script and records every request. */
class ScriptedModel implements ModelClient {
  readonly requests: ModelRequest[] = [];
  constructor(
    private readonly script: ModelResponse[],
    private readonly forced = true,
  ) {}
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const next = this.script.shift();
    if (next === undefined) throw new Error("the script has no more responses");
    if (next.text) request.onDelta({ kind: "text", text: next.text });
    return next;
  }
  supportsForcedToolChoice(): boolean {
    return this.forced;
  }
}

let sequence = 0n;
function stored(m: FrameworkMessage, turnId = "turn-1"): AgentMessage {
  sequence += 1n;
  const role = m.role;
  return create(AgentMessageSchema, {
    sequence,
    turnId,
    role,
    frameworkItem: m.frameworkItem,
    ...(m.text !== undefined ? { text: m.text } : {}),
    ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId, toolName: m.toolName ?? "" } : {}),
  });
}

function turn(
  runner: StepwiseRunner,
  options: {
    messages?: AgentMessage[];
    frameworkRunState?: string | undefined;
    toolCalls?: AgentToolCall[];
    events?: AgentEventPayload[];
    mode?: InteractionMode;
    plan?: AgentPlan;
    builtIns?: string[];
  } = {},
): AgentTurnContext {
  return testTurn({
    messages: options.messages ?? [stored(runner.buildUserMessage("weather in Paris?"))],
    frameworkRunState: options.frameworkRunState,
    toolCalls: options.toolCalls ?? [],
    ...(options.events !== undefined ? { events: options.events } : {}),
    ...(options.mode !== undefined ? { interactionMode: options.mode } : {}),
    ...(options.plan !== undefined ? { plan: options.plan } : {}),
    ...(options.builtIns !== undefined ? { enabledBuiltInTools: options.builtIns } : {}),
  });
}


const weather = {
  name: "get_weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  effect: ToolEffect.READ,
  execute: async (args: Record<string, unknown>) => ({ city: args["city"], sky: "sunny" }),
};
const sendEmail = {
  name: "send_email",
  description: "Sends an email.",
  parameters: { type: "object", properties: { to: { type: "string" } } },
  effect: ToolEffect.NON_IDEMPOTENT_WRITE,
  execute: async () => "sent",
};

function weatherCall(id: string) {
  return { toolCallId: id, toolName: "get_weather", arguments: '{"city":"Oslo"}' };
}

test("a tool turn: the call is deferred, run in its Step, and its result fed back", async () => {
  const model = new ScriptedModel([
    { toolCalls: [{ toolCallId: "w1", toolName: "get_weather", arguments: '{"city":"Paris"}' }], usage: { inputTokens: 9 } },
    { text: "Sunny in Paris.", toolCalls: [] },
  ]);
  const runner = new StepwiseRunner(new AgentDefinition({ model, tools: [weather], instructions: "Be brief." }));
  const first = await runner.runModelStep(turn(runner));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.deepEqual(first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]), [
    ["w1", "get_weather", '{"city":"Paris"}', { effect: ToolEffect.READ, requiresApproval: false }],
  ]);
  assert.equal(first.usage?.inputTokens, 9n);
  assert.equal(model.requests[0]?.instructions, "Be brief.");
  assert.deepEqual(model.requests[0]?.tools.map((t) => t.name), ["get_weather"]);

  const record = create(AgentToolCallSchema, {
    toolCallId: "w1",
    toolName: "get_weather",
    arguments: '{"city":"Paris"}',
    status: ToolCallStatus.APPROVED,
  });
  const outcome = await runner.executeDeferredToolCall(execution(record));
  assert.deepEqual(outcome, toolResult('{"city":"Paris","sky":"sunny"}'));

  // RunModel needs a final record for every call the run state waits for.
  await assert.rejects(
    runner.runModelStep(turn(runner, { frameworkRunState: first.frameworkRunState })),
    /the turn has no tool call record for 'w1' \('get_weather'\), which the run state is waiting for/,
  );
  await assert.rejects(
    runner.runModelStep(turn(runner, { frameworkRunState: first.frameworkRunState, toolCalls: [record] })),
    /tool call 'w1' \('get_weather'\) is not final: its status is approved/,
  );

  const events: AgentEventPayload[] = [];
  const done = await runner.runModelStep(
    turn(runner, {
      frameworkRunState: first.frameworkRunState,
      toolCalls: [{ ...record, status: ToolCallStatus.SUCCEEDED, output: outcome.output }],
      events,
    }),
  );
  assert.ok(isTurnCompleted(done));
  assert.deepEqual(model.requests[1]?.messages.slice(1), [
    { role: "assistant", text: undefined, reasoning: undefined, toolCalls: [{ toolCallId: "w1", toolName: "get_weather", arguments: '{"city":"Paris"}' }] },
    { role: "tool", toolCallId: "w1", toolName: "get_weather", output: '{"city":"Paris","sky":"sunny"}' },
  ]);
  assert.deepEqual(done.newMessages.map((m) => [m.role, m.toolCallId, m.text ?? m.toolOutput]), [
    [MessageRole.ASSISTANT, "w1", undefined],
    [MessageRole.TOOL, "w1", '{"city":"Paris","sky":"sunny"}'],
    [MessageRole.ASSISTANT, undefined, "Sunny in Paris."],
  ]);
  assert.deepEqual(events.map((e) => e.type), ["text_delta"]);
});

test("a write tool is deferred with approval required; a rejection reaches the model", async () => {
  const model = new ScriptedModel([
    { toolCalls: [{ toolCallId: "e1", toolName: "send_email", arguments: '{"to":"a@b"}' }] },
    { text: "Not sent.", toolCalls: [] },
  ]);
  const runner = new StepwiseRunner(new AgentDefinition({ model, tools: [sendEmail] }));
  const first = await runner.runModelStep(turn(runner));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.deepEqual(policyOf(first.toolCalls[0]!), { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true });
  const rejected = create(AgentToolCallSchema, { toolCallId: "e1", toolName: "send_email", status: ToolCallStatus.REJECTED });
  await runner.runModelStep(turn(runner, { frameworkRunState: first.frameworkRunState, toolCalls: [rejected] }));
  assert.deepEqual(model.requests[1]?.messages.at(-1), {
    role: "tool",
    toolCallId: "e1",
    toolName: "send_email",
    output: USER_REJECTED_RESULT,
  });
  // An unfinished turn keeps its transcript with a result for the open call.
  const kept = runner.buildUnfinishedTurnMessages(turn(runner, { frameworkRunState: first.frameworkRunState }));
  assert.deepEqual(kept.map((m) => m.role), [MessageRole.ASSISTANT, MessageRole.TOOL]);
});

test("a call of an unknown tool or a reused ID fails the RunModel attempt", async () => {
  const model = new ScriptedModel([{ toolCalls: [{ toolCallId: "x", toolName: "nope", arguments: "{}" }] }]);
  const runner = new StepwiseRunner(new AgentDefinition({ model, tools: [weather] }));
  await assert.rejects(runner.runModelStep(turn(runner)), /the model called tool 'nope' \(ID 'x'\), which this agent does not have; its tools are: get_weather/);
  const twice = new StepwiseRunner(
    new AgentDefinition({
      model: new ScriptedModel([{ toolCalls: [weatherCall("a"), weatherCall("a")] }]),
      tools: [weather],
    }),
  );
  await assert.rejects(twice.runModelStep(turn(twice)), /reuses a tool call ID of this turn/);
  await assert.rejects(
    runner.executeDeferredToolCall(execution(create(AgentToolCallSchema, { toolCallId: "x", toolName: "get_weather", arguments: "[1]" }))),
    /arguments must be a JSON object/,
  );
});

test("decideTurnContinuation continues a turn, and a run of continuations is bounded", async () => {
  const seen: number[] = [];
  const model = new ScriptedModel([
    { text: "Draft.", toolCalls: [] },
    { text: "Checked.", toolCalls: [] },
  ]);
  const runner = new StepwiseRunner(
    new AgentDefinition({
      model,
      decideTurnContinuation: ({ text, consecutiveContinuations }) => {
        seen.push(consecutiveContinuations);
        return text === "Draft." ? { continueWith: "Check your answer." } : "end";
      },
    }),
  );
  const user = stored(runner.buildUserMessage("write it"));
  const first = await runner.runModelStep(turn(runner, { messages: [user] }));
  assert.ok(isTurnContinued(first));
  if (!isTurnContinued(first)) return;
  assert.deepEqual(first.newMessages?.map((m) => [m.role, m.text]), [
    [MessageRole.ASSISTANT, "Draft."],
    [MessageRole.USER, "Check your answer."],
  ]);
  const history = [user, ...(first.newMessages ?? []).map((m) => stored(m))];
  const second = await runner.runModelStep(turn(runner, { messages: history, frameworkRunState: first.frameworkRunState }));
  assert.ok(isTurnCompleted(second));
  assert.deepEqual(seen, [0, 1]);
  assert.deepEqual(model.requests[1]?.messages.at(-1), { role: "user", text: "Check your answer." });

  const endless = new StepwiseRunner(
    new AgentDefinition({
      model: new ScriptedModel([{ text: "again", toolCalls: [] }]),
      decideTurnContinuation: () => ({ continueWith: "more" }),
    }),
  );
  const state = JSON.stringify({ version: 1, items: [], consecutive_continuations: MAX_CONSECUTIVE_CONTINUATIONS });
  const capped = (await endless.runModelStep(turn(endless, { frameworkRunState: state }))) as TurnCompleted;
  assert.ok(isTurnCompleted(capped));
  assert.equal(capped.turnError, "the turn was continued more than 8 times in a row by decide_turn_continuation");
});

test("decideTurnContinuation 'end' after tool calls ends the turn with the results, without a model call", async () => {
  const model = new ScriptedModel([{ toolCalls: [{ toolCallId: "w1", toolName: "get_weather", arguments: '{"city":"Rome"}' }] }]);
  const runner = new StepwiseRunner(new AgentDefinition({ model, tools: [weather], decideTurnContinuation: () => "end" }));
  const first = await runner.runModelStep(turn(runner));
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  const record = create(AgentToolCallSchema, { toolCallId: "w1", toolName: "get_weather", status: ToolCallStatus.SUCCEEDED, output: "rain" });
  const done = await runner.runModelStep(turn(runner, { frameworkRunState: first.frameworkRunState, toolCalls: [record] }));
  assert.ok(isTurnCompleted(done));
  assert.deepEqual(done.newMessages.map((m) => m.toolOutput ?? m.toolCallId), ["w1", "rain"]);
  assert.equal(model.requests.length, 1);
});

test("plan mode: a planning turn offers only write_todos, sees the plan note, and can force it", async () => {
  const plan = create(AgentPlanSchema, {
    revision: 2,
    status: PlanStatus.ACTIVE,
    tasks: [create(AgentPlanTaskSchema, { content: "book flights", status: PlanTaskStatus.IN_PROGRESS })],
  });
  const model = new ScriptedModel([
    { toolCalls: [{ toolCallId: "p1", toolName: "write_todos", arguments: '{"todos":[]}' }] },
    { text: "on it", toolCalls: [] },
  ]);
  const runner = new StepwiseRunner(new AgentDefinition({ model, tools: [weather], planningToolChoice: "required" }));
  assert.equal(runner.supportsPlanMode, true);
  const planning = await runner.runModelStep(
    turn(runner, { mode: InteractionMode.PLANNING, builtIns: ["write_todos", "ask_user"] }),
  );
  assert.ok(isToolCallsRequested(planning));
  if (!isToolCallsRequested(planning)) return;
  assert.deepEqual(policyOf(planning.toolCalls[0]!), { effect: ToolEffect.READ, requiresApproval: false });
  const request = model.requests[0];
  assert.deepEqual(request?.tools.map((t) => t.name), ["write_todos"]);
  assert.deepEqual(request?.toolChoice, { name: "write_todos" });
  assert.deepEqual(request?.messages[0], {
    role: "user",
    text:
      "[Dex] There is no plan yet.\nThis turn only plans: write or revise the plan with write_todos, and do not do or " +
      "claim any of its tasks. The user reviews the plan before it runs.",
  });
  // An executing turn sees the plan, before the turn's own messages, and all the tools.
  await runner.runModelStep(turn(runner, { plan, builtIns: ["write_todos"] }));
  assert.deepEqual(model.requests[1]?.messages[0], {
    role: "user",
    text: "[Dex] The current plan, revision 2, is active:\n- [in_progress] book flights",
  });
  assert.deepEqual(model.requests[1]?.tools.map((t) => t.name), ["get_weather", "write_todos"]);
  assert.equal(model.requests[1]?.toolChoice, "auto");

  const refusing = new StepwiseRunner(
    new AgentDefinition({ model: new ScriptedModel([], false), planningToolChoice: "required" }),
  );
  const refused = (await refusing.runModelStep(
    turn(refusing, { mode: InteractionMode.PLANNING, builtIns: ["write_todos"] }),
  )) as TurnCompleted;
  assert.match(refused.turnError ?? "", /planning_tool_choice='required' needs a model client/);
});

test("compaction: estimate, a cut that keeps tool calls with their results, and a summary call", async () => {
  const model = new ScriptedModel([{ text: "They asked about Paris weather: sunny.", toolCalls: [], usage: { inputTokens: 40 } }]);
  const definition = new AgentDefinition({ model, tools: [weather], instructions: "Be brief.", maxOutputTokens: 10 });
  const runner = new StepwiseRunner(definition);
  const long = "x".repeat(400);
  const messages = [
    stored(runner.buildUserMessage("weather?"), "t0"),
    stored(frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem: JSON.stringify({ type: "tool_call", tool_call_id: "w1", tool_name: "get_weather", arguments: "{}" }), toolCallId: "w1", toolName: "get_weather" }), "t0"),
    stored(frameworkMessage({ role: MessageRole.TOOL, frameworkItem: JSON.stringify({ type: "tool_result", tool_call_id: "w1", tool_name: "get_weather", output: long }), toolCallId: "w1", toolName: "get_weather" }), "t0"),
    stored(frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem: JSON.stringify({ type: "assistant", text: "sunny" }), text: "sunny" }), "t0"),
    stored(runner.buildUserMessage("and tomorrow?")),
  ];
  const context = turn(runner, { messages });
  const estimate = runner.estimateInputTokens(context);
  assert.ok(estimate > 100, `estimate ${estimate}`);
  const first = messages[0]!.sequence;
  // A budget that fits only the last two messages cuts after the tool result, never between call and result.
  assert.equal(runner.selectCompactionCutoff(context, 20), Number(first) + 2);
  assert.equal(runner.selectCompactionCutoff(context, 0), Number(first) + 3);
  assert.equal(runner.selectCompactionCutoff(context, 10_000), Number(first));

  const summary = await runner.summarizeContext({
    flowId: "s1",
    turnId: "turn-1",
    attempt: 1,
    previousSummary: undefined,
    messages,
    throughSequence: Number(first) + 3,
    inputTokenBudget: 10_000,
    sessionSettings: {},
    events: { write: () => {}, writeRaw: () => {} },
    heartbeat: async () => {},
    cancellationSignal: new AbortController().signal,
  });
  assert.equal(summary.text, "They asked about Paris weather: sunny.");
  assert.equal(summary.usage?.inputTokens, 40n);
  const request = model.requests[0];
  assert.match(request?.instructions ?? "", /^You summarize conversations/);
  assert.deepEqual(request?.tools, []);
  const [only] = request?.messages ?? [];
  assert.ok(only?.role === "user");
  assert.ok(only.text.startsWith("User: weather?\nAssistant called tool get_weather (w1) with {}\nTool result of get_weather (w1): x"));
  assert.ok(only.text.endsWith("Assistant: sunny\n\nSummarize the conversation above for the agent that continues it."));
  assert.ok(!only.text.includes("and tomorrow?"));
});

test("structured output: a bad answer is stored with a retry prompt, retried in the next Step, and bounded", async () => {
  type City = { name: string };
  const model = new ScriptedModel([
    { text: "not json", toolCalls: [], outputError: "The answer is not JSON." },
    { text: '{"name":"paris"}', toolCalls: [], output: { name: "paris" } },
    { text: '{"name":"Paris"}', toolCalls: [], output: { name: "Paris" } },
  ]);
  const validate = (city: City) => (city.name.startsWith("P") ? undefined : "Capitalize the city name.");
  const runner = new StepwiseRunner(new AgentDefinition({ model, output: { validate } }));
  const first = await runner.runModelStep(turn(runner));
  assert.ok(isTurnContinued(first));
  if (!isTurnContinued(first)) return;
  assert.equal(model.requests[0]?.structuredOutput, true);
  assert.deepEqual(first.newMessages?.map((m) => [m.role, m.text]), [
    [MessageRole.ASSISTANT, "not json"],
    [MessageRole.USER, "The answer is not JSON. Answer again with only the JSON the response format asks for."],
  ]);
  const stored1 = [stored(runner.buildUserMessage("weather in Paris?")), ...(first.newMessages ?? []).map((m) => stored(m))];
  const second = await runner.runModelStep(turn(runner, { messages: stored1, frameworkRunState: first.frameworkRunState }));
  assert.ok(isTurnContinued(second));
  if (!isTurnContinued(second)) return;
  assert.deepEqual(second.newMessages?.map((m) => m.text), ['{"name":"paris"}', "Capitalize the city name."]);
  // The retry's model call saw the bad answer and its prompt.
  assert.deepEqual(model.requests[1]?.messages.map((m) => m.role), ["user", "assistant", "user"]);
  const stored2 = [...stored1, ...(second.newMessages ?? []).map((m) => stored(m))];
  const third = await runner.runModelStep(turn(runner, { messages: stored2, frameworkRunState: second.frameworkRunState }));
  assert.ok(isTurnCompleted(third));
  if (!isTurnCompleted(third)) return;
  assert.equal(third.turnError, undefined);
  assert.deepEqual(third.newMessages.map((m) => m.text), ['{"name":"Paris"}']);

  // One retry allowed: the second bad answer in a row fails the turn.
  const strict = new StepwiseRunner(
    new AgentDefinition({
      model: new ScriptedModel([
        { text: "{}", toolCalls: [], outputError: "name is missing." },
        { text: "{}", toolCalls: [], outputError: "name is missing." },
      ]),
      output: { maxRetries: 1 },
    }),
  );
  const retry = await strict.runModelStep(turn(strict));
  assert.ok(isTurnContinued(retry));
  if (!isTurnContinued(retry)) return;
  const failed = await strict.runModelStep(turn(strict, { frameworkRunState: retry.frameworkRunState }));
  assert.ok(isTurnCompleted(failed));
  if (!isTurnCompleted(failed)) return;
  assert.match(failed.turnError ?? "", /^the answer failed its output check 2 times in a row: name is missing\./);

  // A client that ignores the request is a bug, not a retry.
  const deaf = new StepwiseRunner(new AgentDefinition({ model: new ScriptedModel([{ text: "hi", toolCalls: [] }]), output: {} }));
  await assert.rejects(deaf.runModelStep(turn(deaf)), /answered without structured output/);
});

test("the loop's run state is enveloped under the runner's adapter name; a pre-envelope state still reads", () => {
  const state = { items: [{ type: "user" as const, text: "hi" }], consecutiveContinuations: 2, afterToolCalls: "end" as const };
  const text = encodeRunState(state);
  assert.equal((JSON.parse(text) as Record<string, unknown>)["adapter"], "stepwise");
  assert.deepEqual(decodeRunState(text), state);
  const legacy = JSON.stringify({ version: 1, items: [{ type: "user", text: "hi" }], consecutive_continuations: 2, after_tool_calls: { decision: "end" } });
  const mastra = stepwiseRunStateFormat({ adapter: "mastra" });
  assert.deepEqual(decodeRunState(legacy, mastra), state);
  assert.throws(() => decodeRunState(encodeRunState(state, mastra)), (e: unknown) => e instanceof RunStateError && /written by the stepwise adapter but by mastra/.test(e.message));
  assert.throws(() => decodeRunState(JSON.stringify({ version: 2, items: [] })), RunStateError);
});
