import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentToolCallSchema,
  decodeExecuteDeferredToolCallResponse,
  decodePollToolTaskResponse,
  encodeExecuteDeferredToolCallRequest,
  encodePollToolTaskRequest,
  ExecuteDeferredToolCallRequestSchema,
  PollToolTaskRequestSchema,
  ToolCallStatus,
  ToolEffect,
  type ExecuteDeferredToolCallResponse,
  type PollToolTaskResponse,
  MessageRole,
} from "@dex-agents/contracts";
import * as grpc from "@grpc/grpc-js";
import { serveRunners, type AgentFrameworkRunner, type DeferredToolOutcome, type RunnerServer } from "./index.js";
import { MAX_POLL_INTERVAL_MILLISECONDS, pollIntervalMilliseconds } from "./poll_interval.js";
import { frameworkMessage, toolTaskPending, toolTaskStarted } from "./values.js";

const SERVICE = "/dex.agents.v1.AgentFrameworkRunnerService";
let server: RunnerServer;
let client: grpc.Client;

/** The interval each call answers is the tool call's arguments, as JSON ("NaN" for NaN). */
function seconds(argumentsJson: string): number {
  return argumentsJson === '"NaN"' ? Number.NaN : (JSON.parse(argumentsJson) as number);
}

const runner: AgentFrameworkRunner<DeferredToolOutcome> = {
  buildUserMessage: (text) => (frameworkMessage({ role: MessageRole.USER, frameworkItem: "{}", text })),
  runModelStep: () => Promise.reject(new Error("not used")),
  executeDeferredToolCall: async (call) => (toolTaskStarted("t1", seconds(call.toolCall.arguments))),
  pollToolTask: async (poll) => (toolTaskPending(seconds(poll.toolCall.arguments))),
};

function toolCall(argumentsJson: string) {
  return create(AgentToolCallSchema, {
    toolCallId: "c1",
    turnId: "turn-1",
    toolName: "job",
    arguments: argumentsJson,
    effect: ToolEffect.READ,
    status: ToolCallStatus.APPROVED,
  });
}

function lastFrame<T>(method: string, body: string, decode: (b: Buffer) => T): Promise<T | undefined> {
  const call = client.makeServerStreamRequest(`${SERVICE}/${method}`, (t: string) => Buffer.from(t), decode, body);
  let last: T | undefined;
  return new Promise((resolve, reject) => {
    call.on("data", (frame: T) => (last = frame));
    call.on("end", () => resolve(last));
    call.on("error", reject);
  });
}

function started(argumentsJson: string): Promise<ExecuteDeferredToolCallResponse | undefined> {
  const request = create(ExecuteDeferredToolCallRequestSchema, {
    flowType: "Jobs",
    flowId: "s1",
    turnId: "turn-1",
    idempotencyKey: "s1/turn-1/c1",
    attempt: 1,
    supportsToolTasks: true,
    toolCall: toolCall(argumentsJson),
  });
  return lastFrame("ExecuteDeferredToolCall", encodeExecuteDeferredToolCallRequest(request), (b) =>
    decodeExecuteDeferredToolCallResponse(b),
  );
}

function pending(argumentsJson: string): Promise<PollToolTaskResponse | undefined> {
  const request = create(PollToolTaskRequestSchema, {
    flowType: "Jobs",
    flowId: "s1",
    idempotencyKey: "s1/turn-1/c1",
    attempt: 1,
    toolCall: toolCall(argumentsJson),
  });
  return lastFrame("PollToolTask", encodePollToolTaskRequest(request), (b) => decodePollToolTaskResponse(b));
}

before(async () => {
  server = await serveRunners({ runners: { Jobs: runner }, heartbeatIntervalMs: 60_000 });
  client = new grpc.Client(server.address, grpc.credentials.createInsecure());
});

after(async () => {
  client.close();
  await server.close();
});

test("intervals round up to whole milliseconds within int32; negative ones are 0", () => {
  assert.equal(pollIntervalMilliseconds(0.0015, "task_started"), 2);
  assert.equal(pollIntervalMilliseconds(2, "task_started"), 2000);
  assert.equal(pollIntervalMilliseconds(2_147_483.647, "task_started"), MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal(pollIntervalMilliseconds(2_147_483.648, "task_started"), MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal(pollIntervalMilliseconds(1e12, "task_pending"), MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal(pollIntervalMilliseconds(Number.POSITIVE_INFINITY, "task_pending"), MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal(pollIntervalMilliseconds(-5, "task_pending"), 0);
  assert.equal(pollIntervalMilliseconds(-0, "task_pending"), 0);
  assert.equal(pollIntervalMilliseconds(Number.NEGATIVE_INFINITY, "task_pending"), 0);
  assert.throws(
    () => pollIntervalMilliseconds(Number.NaN, "task_pending"),
    /a task_pending outcome's pollIntervalSeconds must be a number, got NaN/,
  );
  assert.throws(() => pollIntervalMilliseconds("5" as unknown as number, "task_started"), /must be a number, got 5/);
});

test("a huge task_started or task_pending interval reaches the wire as the int32 maximum", async () => {
  assert.equal((await started("1e12"))?.taskStarted?.pollIntervalMilliseconds, MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal((await pending("1e12"))?.taskPending?.pollIntervalMilliseconds, MAX_POLL_INTERVAL_MILLISECONDS);
  assert.equal((await started("-3"))?.taskStarted?.pollIntervalMilliseconds, 0);
  assert.equal((await pending("1.5"))?.taskPending?.pollIntervalMilliseconds, 1500);
});

test("a NaN interval is a failure frame that names it, not a silent 0", async () => {
  const execute = await started('"NaN"');
  assert.equal(execute?.taskStarted, undefined);
  assert.equal(execute?.failure?.errorType, "TypeError");
  assert.match(execute?.failure?.message ?? "", /a task_started outcome's pollIntervalSeconds must be a number, got NaN/);
  const poll = await pending('"NaN"');
  assert.match(poll?.failure?.message ?? "", /a task_pending outcome's pollIntervalSeconds must be a number, got NaN/);
});
