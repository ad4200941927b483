import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentToolCallSchema,
  ContextSummarySchema,
  decodeDescribeRunnerResponse,
  decodeExecuteDeferredToolCallResponse,
  decodeRunModelStepResponse,
  DescribeRunnerRequestSchema,
  encodeDescribeRunnerRequest,
  encodeExecuteDeferredToolCallRequest,
  encodeRunModelStepRequest,
  ExecuteDeferredToolCallRequestSchema,
  InteractionMode,
  RunModelStepRequestSchema,
  RunnerTurnContextSchema,
  TextDeltaPayloadSchema,
  ToolCallStatus,
  ToolEffect,
  type DescribeRunnerResponse,
  type ExecuteDeferredToolCallResponse,
  type RunModelStepResponse,
  MessageRole,
} from "@dex-agents/contracts";
import * as grpc from "@grpc/grpc-js";
import {
  serveRunners,
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type RunnerServer,
  type ServeRunnersOptions,
  type ToolExecutionResult,
} from "./index.js";
import { deferredToolCall, frameworkMessage, toolCallsRequested } from "./values.js";

const SERVICE = "/dex.agents.v1.AgentFrameworkRunnerService";
let aborted: unknown;
let holding: () => void = () => {};
let server: RunnerServer;
let client: grpc.Client;

const runner: AgentFrameworkRunner<ToolExecutionResult> = {
  buildUserMessage: (text) => (frameworkMessage({ role: MessageRole.USER, frameworkItem: JSON.stringify({ text }), text })),
  async runModelStep(turn: AgentTurnContext) {
    if (turn.contextSummary?.text === "hold") {
      holding();
      await new Promise<void>((resolve) => {
        turn.cancellationSignal.addEventListener("abort", () => {
          aborted = turn.cancellationSignal.reason;
          resolve();
        });
      });
      throw new Error("aborted");
    }
    turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: "Hi" }) });
    await turn.heartbeat();
    const policy = turn.resolveToolPolicy("refund", ToolEffect.READ);
    return toolCallsRequested({
      frameworkRunState: "[]",
      toolCalls: [deferredToolCall({ toolCallId: "c1", toolName: "refund", arguments: "{}" }, policy)],
      usage: { modelCalls: 1, inputTokens: 7 },
    });
  },
  async executeDeferredToolCall(call) {
    await call.saveHeartbeatCheckpoint("task-1");
    throw new ToolExecutionError(`no order for ${call.idempotencyKey}`);
  },
  buildUnfinishedTurnMessages: () => [],
};

function stream<T>(method: string, body: string, decode: (b: Buffer) => T): grpc.ClientReadableStream<T> {
  return client.makeServerStreamRequest(
    `${SERVICE}/${method}`,
    (text: string) => Buffer.from(text),
    decode,
    body,
  );
}

function frames<T>(call: grpc.ClientReadableStream<T>): Promise<T[]> {
  const seen: T[] = [];
  return new Promise((resolve, reject) => {
    call.on("data", (frame: T) => seen.push(frame));
    call.on("end", () => resolve(seen));
    call.on("error", reject);
  });
}

before(async () => {
  server = await serveRunners({
    runners: { Refunds: runner },
    heartbeatIntervalMs: 60_000,
    sessionOptions: {
      Refunds: {
        toolPolicies: { refund: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true } },
        interruptDeadlineSeconds: 600,
        builtInTools: ["ask_user"],
        compaction: { contextWindowTokens: 128_000, triggerPercent: 80 },
        retainedMessageLimit: null,
      },
    },
  });
  client = new grpc.Client(server.address, grpc.credentials.createInsecure());
});

after(async () => {
  client.close();
  await server.close();
});

test("DescribeRunner reports the optional methods the runner defines", async () => {
  const described = await new Promise<DescribeRunnerResponse>((resolve, reject) => {
    client.makeUnaryRequest(
      `${SERVICE}/DescribeRunner`,
      (text: string) => Buffer.from(text),
      (b: Buffer) => decodeDescribeRunnerResponse(b),
      encodeDescribeRunnerRequest(create(DescribeRunnerRequestSchema, { flowType: "Refunds" })),
      (error, value) => (error || value === undefined ? reject(error) : resolve(value)),
    );
  });
  assert.equal(described.buildsUnfinishedTurnMessages, true);
  assert.equal(described.pollsToolTasks, false);
  assert.equal(described.failure, undefined);
  const options = described.sessionOptions;
  assert.ok(options !== undefined);
  assert.deepEqual(
    options.toolPolicies.map((p) => [p.toolName, p.effect, p.requiresApproval]),
    [["refund", ToolEffect.NON_IDEMPOTENT_WRITE, true]],
  );
  assert.equal(options.defaultToolEffect, undefined);
  assert.equal(options.interruptDeadlineSeconds, 600);
  assert.deepEqual(options.builtInTools, ["ask_user"]);
  assert.equal(options.compaction?.contextWindowTokens, 128_000);
  assert.equal(options.compaction?.triggerPercent, 80);
  assert.equal(options.compaction?.retainedPercent, undefined);
  assert.equal(options.retainedMessageLimit, 0); // null: keep every message
  assert.equal(options.maxValueBytes, undefined);
});

test("session options the wire cannot carry, or for no served runner, fail serveRunners", async () => {
  const serve = (sessionOptions: ServeRunnersOptions["sessionOptions"]) =>
    serveRunners({ runners: { Refunds: runner }, sessionOptions });
  await assert.rejects(serve({ Nope: {} }), /sessionOptions names flow type "Nope", which serves no runner/);
  await assert.rejects(
    serve({ Refunds: { interruptDeadlineSeconds: 1.5 } }),
    /`interruptDeadlineSeconds` must be a whole number from 1 to 2147483647, got 1.5/,
  );
  await assert.rejects(
    serve({ Refunds: { toolPolicies: { refund: { effect: ToolEffect.UNSPECIFIED } } } }),
    /`toolPolicies.refund.effect` must be a tool effect, got 0/,
  );
  await assert.rejects(
    serve({ Refunds: { compaction: { contextWindowTokens: 0 } } }),
    /`compaction.contextWindowTokens` must be a whole number from 1/,
  );
});

test("RunModelStep streams the event and heartbeat, then the outcome", async () => {
  const request = create(RunModelStepRequestSchema, {
    flowType: "Refunds",
    turn: create(RunnerTurnContextSchema, {
      flowId: "s1",
      turnId: "turn-1",
      attempt: 1,
      toolPolicies: [{ toolName: "refund", effect: ToolEffect.NON_IDEMPOTENT_WRITE }],
      defaultToolEffect: ToolEffect.UNCLASSIFIED,
      interactionMode: InteractionMode.CHAT,
    }),
  });
  const seen = await frames(
    stream<RunModelStepResponse>("RunModelStep", encodeRunModelStepRequest(request), (b) => decodeRunModelStepResponse(b)),
  );
  assert.deepEqual(
    seen.map((f) => f.event?.eventType ?? (f.heartbeat ? "heartbeat" : f.toolCallsRequested ? "outcome" : "?")),
    ["text_delta", "heartbeat", "outcome"],
  );
  const [call] = seen[2]?.toolCallsRequested?.toolCalls ?? [];
  // The session's policy wins over the framework's `read`.
  assert.equal(call?.effect, ToolEffect.NON_IDEMPOTENT_WRITE);
  assert.equal(call?.requiresApproval, true);
  assert.equal(seen[2]?.toolCallsRequested?.usage?.inputTokens, 7n);
});

test("a cancelled RunModelStep aborts the runner's cancellationSignal", async () => {
  aborted = undefined;
  const request = create(RunModelStepRequestSchema, {
    flowType: "Refunds",
    turn: create(RunnerTurnContextSchema, {
      flowId: "s1",
      turnId: "turn-1",
      attempt: 1,
      defaultToolEffect: ToolEffect.READ,
      interactionMode: InteractionMode.CHAT,
      contextSummary: create(ContextSummarySchema, { text: "hold" }),
    }),
  });
  const held = new Promise<void>((resolve) => {
    holding = resolve;
  });
  const call = stream("RunModelStep", encodeRunModelStepRequest(request), (b) => decodeRunModelStepResponse(b));
  call.on("error", () => {});
  await held;
  call.cancel();
  const deadline = Date.now() + 10_000;
  while (aborted === undefined && Date.now() < deadline) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.ok(aborted instanceof Error, "the signal did not abort");
});

test("a ToolExecutionError is model-visible; an unknown flow type is a failure frame", async () => {
  const body = (flowType: string): string =>
    encodeExecuteDeferredToolCallRequest(
      create(ExecuteDeferredToolCallRequestSchema, {
        flowType,
        flowId: "s1",
        turnId: "turn-1",
        idempotencyKey: "s1/turn-1/c1",
        attempt: 1,
        toolCall: create(AgentToolCallSchema, {
          toolCallId: "c1",
          turnId: "turn-1",
          toolName: "refund",
          arguments: "{}",
          effect: ToolEffect.READ,
          status: ToolCallStatus.APPROVED,
        }),
      }),
    );
  const decode = (b: Buffer): ExecuteDeferredToolCallResponse => decodeExecuteDeferredToolCallResponse(b);
  const seen = await frames(stream("ExecuteDeferredToolCall", body("Refunds"), decode));
  assert.equal(seen[0]?.heartbeat?.checkpoint, "task-1");
  assert.equal(seen[1]?.toolError?.message, "no order for s1/turn-1/c1");
  const [unknown] = await frames(stream("ExecuteDeferredToolCall", body("Nope"), decode));
  assert.equal(unknown?.failure?.errorType, "UnknownFlowTypeError");
  assert.match(unknown?.failure?.message ?? "", /no runner is served for flow type "Nope"; served: Refunds/);
});
