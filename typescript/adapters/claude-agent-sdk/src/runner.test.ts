/**
 * ClaudeAgentRunner with the real bundled Claude Code CLI against the scripted
 * loopback Messages API: no key, no network.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import { tool, type SdkMcpToolDefinition } from "@anthropic-ai/claude-agent-sdk";
import { create } from "@bufbuild/protobuf";
import {
  AgentMessageSchema,
  AgentToolCallSchema,
  MessageRole,
  ToolCallStatus,
  ToolEffect,
  type AgentEventPayload,
  type AgentMessage,
  type AgentToolCall,
} from "@dex-agents/contracts";
import {
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolExecution,
  type FrameworkMessage,
  CAPABILITIES,
  describeRunner,
  supports,
  isTurnCompleted,
  isToolCallsRequested,
  policyOf,
} from "@dex-agents/core";
import { testTurn } from "@dex-agents/core/testing";
import { z } from "zod";
import { ClaudeAgentRunner, currentToolExecution, deniedText, maxTurnsError, type ClaudeAgentRunnerOptions } from "./index.js";
import { FakeMessagesServer, offlineEnv, textReply, toolUseReply, type MessagesRequest, type ScriptedReply } from "./testing/fake_messages.js";
import { owesAnswer, promptOf, resultsText } from "./testing/script.js";

function script(request: MessagesRequest): ScriptedReply {
  const prompt = promptOf(request);
  if (owesAnswer(request) && !prompt.startsWith("loop")) return textReply(resultsText(request));
  if (prompt.startsWith("weather")) return toolUseReply(["w1", "mcp__app__get_weather", { city: "Paris" }]);
  if (prompt.startsWith("book")) return toolUseReply(["r1", "mcp__app__get_weather", { city: "Rome" }], ["k1", "mcp__app__book_trip", { city: "Rome" }]);
  if (prompt.startsWith("two bookings")) {
    return toolUseReply(["k1", "mcp__app__book_trip", { city: "Rome" }], ["w1", "mcp__app__get_weather", { city: "Lima" }], ["k2", "mcp__app__book_trip", { city: "Oslo" }]);
  }
  if (prompt.startsWith("bash")) return toolUseReply(["b1", "Bash", { command: "echo hi" }]);
  if (prompt.startsWith("loop")) {
    const n = request.toolUses().length + 1;
    return toolUseReply([`l${n}`, "mcp__app__get_weather", { city: `C${n}` }]);
  }
  return textReply(`I have seen ${request.messages.length} messages.`);
}

/** The session's side of a turn, kept in memory: stored messages, records, run state. */
class Session {
  messages: AgentMessage[] = [];
  toolCalls: AgentToolCall[] = [];
  runState: string | undefined;
  events: AgentEventPayload[] = [];
  turn = 0;

  constructor(readonly runner: ClaudeAgentRunner) {}

  store(messages: readonly FrameworkMessage[]): void {
    for (const m of messages) {
      this.messages.push(
        create(AgentMessageSchema, {
          sequence: BigInt(this.messages.length + 1),
          turnId: `turn-${this.turn}`,
          role: m.role,
          frameworkItem: m.frameworkItem,
          ...(m.text !== undefined ? { text: m.text } : {}),
          ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
          ...(m.toolOutput !== undefined ? { toolOutput: m.toolOutput } : {}),
        }),
      );
    }
  }

  startTurn(text: string): void {
    this.turn += 1;
    this.toolCalls = [];
    this.runState = undefined;
    this.store([this.runner.buildUserMessage(text)]);
  }

  context(signal: AbortSignal = new AbortController().signal): AgentTurnContext {
    return testTurn({
      turnId: `turn-${this.turn}`,
      messages: this.messages,
      frameworkRunState: this.runState,
      toolCalls: this.toolCalls,
      signal,
      events: this.events,
    });
  }


  async runModel(): Promise<AgentTurnOutcome> {
    const outcome = await this.runner.runModelStep(this.context());
    if (isTurnCompleted(outcome)) {
      this.store(outcome.newMessages);
    } else if (isToolCallsRequested(outcome)) {
      this.runState = outcome.frameworkRunState;
      for (const call of outcome.toolCalls) {
        this.toolCalls.push(
          create(AgentToolCallSchema, {
            toolCallId: call.toolCallId,
            turnId: `turn-${this.turn}`,
            toolName: call.toolName,
            arguments: call.arguments,
            effect: policyOf(call!).effect,
            requiresApproval: policyOf(call!).requiresApproval,
            status: ToolCallStatus.AWAITING_APPROVAL,
          }),
        );
      }
    }
    return outcome;
  }

  record(id: string): AgentToolCall {
    const record = this.toolCalls.find((r) => r.toolCallId === id);
    assert.ok(record !== undefined, `no record of ${id}`);
    return record;
  }

  async executeAndRecord(id: string): Promise<void> {
    const record = this.record(id);
    const call = {
      flowId: "s1",
      turnId: record.turnId,
      toolCall: record,
      idempotencyKey: `s1/${record.turnId}/${id}`,
      attempt: 1,
      heartbeat: async () => {},
    } as unknown as DeferredToolExecution;
    const result = await this.runner.executeDeferredToolCall(call);
    record.status = ToolCallStatus.SUCCEEDED;
    record.output = result.output;
  }
}

interface Agent {
  readonly server: FakeMessagesServer;
  readonly runs: string[];
  readonly keys: (string | undefined)[];
  session(extra?: Partial<ClaudeAgentRunnerOptions>): Session;
}

async function withAgent(
  body: (agent: Agent) => Promise<void>,
  respond: (request: MessagesRequest) => ScriptedReply | Promise<ScriptedReply> = script,
): Promise<void> {
  const server = await FakeMessagesServer.start(respond);
  const runs: string[] = [];
  const keys: (string | undefined)[] = [];
  const weather = tool("get_weather", "The weather in a city.", { city: z.string() }, async ({ city }) => {
    runs.push(`get_weather ${city}`);
    return { content: [{ type: "text", text: `sunny in ${city}` }] };
  }, { annotations: { readOnlyHint: true } });
  const book = tool("book_trip", "Books a trip.", { city: z.string() }, async ({ city }) => {
    runs.push(`book_trip ${city}`);
    keys.push(currentToolExecution()?.idempotencyKey);
    return { content: [{ type: "text", text: `booked ${city}` }] };
  });
  const tools: SdkMcpToolDefinition<any>[] = [weather, book];
  const agent: Agent = {
    server,
    runs,
    keys,
    session: (extra = {}) =>
      new Session(
        new ClaudeAgentRunner({
          tools: { app: tools },
          toolPolicies: { book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE } },
          ...extra,
          options: { model: "claude-scripted", tools: [], settingSources: [], maxTurns: 8, env: offlineEnv(server.baseUrl), ...extra.options },
        }),
      ),
  };
  try {
    await body(agent);
  } finally {
    await server.close();
  }
}

test("an inline read turn is one RunModel; the next turn resumes the whole session", async () => {
  await withAgent(async (agent) => {
    const session = agent.session();
    session.startTurn("weather in Paris?");
    const outcome = await session.runModel();
    assert.ok(isTurnCompleted(outcome));
    if (!isTurnCompleted(outcome)) return;
    assert.equal(outcome.turnError, undefined);
    assert.deepEqual(agent.runs, ["get_weather Paris"]);
    assert.deepEqual(
      session.messages.map((m) => [m.role, m.toolCallId || undefined]),
      [[MessageRole.USER, undefined], [MessageRole.ASSISTANT, "w1"], [MessageRole.TOOL, "w1"], [MessageRole.ASSISTANT, undefined]],
    );
    assert.equal(session.messages[2]?.toolOutput, "sunny in Paris");
    assert.equal(session.messages.at(-1)?.text, "Results: get_weather=sunny in Paris");
    assert.equal(outcome.usage?.modelCalls, 2n);
    assert.equal(outcome.modelCallMetadata?.providerName, "anthropic");
    assert.equal(outcome.modelCallMetadata?.responseModel, "claude-scripted");
    assert.ok(session.events.some((e) => e.type === "text_delta"));
    assert.deepEqual(agent.server.otherPaths, []);

    session.startTurn("thanks");
    const second = await session.runModel();
    assert.ok(isTurnCompleted(second));
    const last = agent.server.requests.at(-1)!;
    assert.equal(last.userTexts()[0], "weather in Paris?");
    assert.equal(last.userTexts().at(-1), "thanks");
    assert.deepEqual(last.toolResults().map(([id, text]) => [id, text]), [["w1", "sunny in Paris"]]);
    assert.equal(agent.runs.length, 1);
  });
});

test("an approval-gated write is deferred, runs once in its tool Step with its key, and its result is fed back", async () => {
  await withAgent(async (agent) => {
    const session = agent.session();
    session.startTurn("book Rome");
    const outcome = await session.runModel();
    assert.ok(isToolCallsRequested(outcome));
    if (!isToolCallsRequested(outcome)) return;
    assert.deepEqual(
      outcome.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments, policyOf(c!)]),
      [["k1", "mcp__app__book_trip", '{"city":"Rome"}', { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true }]],
    );
    assert.deepEqual(agent.runs, ["get_weather Rome"], "the read ran inline, the write did not");
    await session.executeAndRecord("k1");
    assert.deepEqual(agent.keys, ["s1/turn-1/k1"]);
    const done = await session.runModel();
    assert.ok(isTurnCompleted(done));
    assert.equal(session.messages.at(-1)?.text, "Results: get_weather=sunny in Rome; book_trip=booked Rome");
    assert.deepEqual(agent.runs, ["get_weather Rome", "book_trip Rome"]);
    // The model saw the write's result as the tool_result of its own call.
    const fed = agent.server.requests.at(-1)!.toolResults();
    assert.deepEqual(fed.map(([id, text, error]) => [id, text, error]), [["r1", "sunny in Rome", false], ["k1", "booked Rome", false]]);
    assert.deepEqual(
      session.messages.filter((m) => m.role === MessageRole.TOOL).map((m) => [m.toolCallId, m.toolOutput]),
      [["r1", "sunny in Rome"], ["k1", "booked Rome"]],
    );
  });
});

test("two deferred writes of one response run one tool Step each, in order, then Claude sees every result", async () => {
  await withAgent(async (agent) => {
    const session = agent.session();
    session.startTurn("two bookings");
    const first = await session.runModel();
    assert.ok(isToolCallsRequested(first));
    if (!isToolCallsRequested(first)) return;
    assert.deepEqual(first.toolCalls.map((c) => [c.toolCallId, c.arguments]), [["k1", '{"city":"Rome"}']]);
    assert.deepEqual(agent.runs, ["get_weather Lima"], "the read between the writes ran inline");
    await session.executeAndRecord("k1");

    // The next RunModel asks for the second write without a model call.
    const second = await session.runModel();
    assert.ok(isToolCallsRequested(second));
    if (!isToolCallsRequested(second)) return;
    assert.deepEqual(second.toolCalls.map((c) => [c.toolCallId, c.toolName, c.arguments]), [["k2", "mcp__app__book_trip", '{"city":"Oslo"}']]);
    assert.equal(second.usage?.modelCalls, 0n);
    assert.equal(agent.server.requests.length, 1);
    await session.executeAndRecord("k2");

    const done = await session.runModel();
    assert.ok(isTurnCompleted(done));
    assert.deepEqual(agent.runs, ["get_weather Lima", "book_trip Rome", "book_trip Oslo"]);
    assert.deepEqual(agent.keys, ["s1/turn-1/k1", "s1/turn-1/k2"]);
    assert.equal(agent.server.requests.length, 2);
    // The inline read's result is the CLI's own entry; the writes' follow in order.
    const fed = agent.server.requests.at(-1)!.toolResults();
    assert.deepEqual(fed, [["w1", "sunny in Lima", false], ["k1", "booked Rome", false], ["k2", "booked Oslo", false]]);
    assert.equal(session.messages.at(-1)?.text, "Results: get_weather=sunny in Lima; book_trip=booked Rome; book_trip=booked Oslo");
    assert.deepEqual(
      session.messages.filter((m) => m.role === MessageRole.TOOL).map((m) => [m.toolCallId, m.toolOutput]),
      [["w1", "sunny in Lima"], ["k1", "booked Rome"], ["k2", "booked Oslo"]],
    );
  });
});

test("a turn stopped between two deferred writes of one response shows each call once", async () => {
  await withAgent(async (agent) => {
    const session = agent.session();
    session.startTurn("two bookings");
    await session.runModel();
    await session.executeAndRecord("k1");
    const second = await session.runModel();
    assert.ok(isToolCallsRequested(second));
    // Cancelled while k2 waits for its approval: the unfinished turn is what ran.
    const shown = session.runner.buildUnfinishedTurnMessages(session.context());
    const calls = shown.filter((m) => m.role === MessageRole.ASSISTANT && m.toolCallId !== undefined).map((m) => m.toolCallId);
    const results = shown.filter((m) => m.role === MessageRole.TOOL).map((m) => [m.toolCallId, m.toolOutput]);
    assert.deepEqual(calls, ["k1"]);
    assert.deepEqual(results, [["k1", "booked Rome"]]);
  });
});

test("a rejected write is answered from its record and never runs", async () => {
  await withAgent(async (agent) => {
    const session = agent.session();
    session.startTurn("book Rome");
    await session.runModel();
    const record = session.record("k1");
    record.status = ToolCallStatus.REJECTED;
    record.rejectionMessage = "Not this week.";
    const done = await session.runModel();
    assert.ok(isTurnCompleted(done));
    assert.equal(session.messages.at(-1)?.text, "Results: get_weather=sunny in Rome; book_trip=Not this week.");
    assert.deepEqual(agent.runs, ["get_weather Rome"]);
    const k1 = agent.server.requests.at(-1)!.toolResults().find(([id]) => id === "k1");
    assert.deepEqual(k1, ["k1", "Not this week.", true]);
  });
});

test("an aborted cancellationSignal stops the running CLI", async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let asked!: () => void;
  const reached = new Promise<void>((resolve) => (asked = resolve));
  await withAgent(
    async (agent) => {
      const session = agent.session();
      session.startTurn("hello");
      const controller = new AbortController();
      const running = session.runner.runModelStep(session.context(controller.signal));
      await reached; // the CLI is inside its model call
      controller.abort(new Error("cancel_turn"));
      await assert.rejects(running, /cancel_turn/);
      release();
    },
    async () => {
      asked();
      await held;
      return textReply("too late");
    },
  );
});

test("a CLI built-in write is denied by the hook, not prompted", async () => {
  await withAgent(async (agent) => {
    const session = agent.session({ options: { tools: ["Bash"] } });
    session.startTurn("bash it");
    const outcome = await session.runModel();
    assert.ok(isTurnCompleted(outcome));
    const result = session.messages.find((m) => m.role === MessageRole.TOOL);
    assert.ok(result?.toolOutput?.includes(deniedText("Bash")), result?.toolOutput);
  });
});

test("the max_turns bound ends the turn with the runner's error", async () => {
  await withAgent(async (agent) => {
    const session = agent.session({ options: { maxTurns: 3 } });
    session.startTurn("loop forever");
    const outcome = await session.runModel();
    assert.ok(isTurnCompleted(outcome));
    if (!isTurnCompleted(outcome)) return;
    assert.equal(outcome.turnError, maxTurnsError(3));
    assert.ok(agent.runs.length <= 3);
  });
});

test("describe() agrees with the runner's methods and gives each gap a reason", () => {
  const capabilities = describeRunner(Object.create(ClaudeAgentRunner.prototype) as ClaudeAgentRunner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size + CAPABILITIES.filter((c) => supports(capabilities, c)).length, CAPABILITIES.length);
  assert.match(reasons.get("mcp_sources") ?? "", /Python-only/);
});
