// McpToolSource on StepwiseRunner against real MCP servers of the official SDK
// (testing/mcp_server.ts) over stdio and Streamable HTTP on loopback, stateless
// and stateful: listing, calls with the idempotency key, failures, and tasks
// handed to PollToolTask or followed inside the tool Step.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { AgentToolCallSchema, ToolCallStatus, ToolEffect, type AgentToolCall } from "@dex-agents/contracts";
import { ToolExecutionError, type DeferredToolExecution, type ToolTaskPoll } from "../runner.js";
import { AgentDefinition, StepwiseRunner, type ModelClient, type ModelRequest, type ModelResponse } from "../stepwise/index.js";
import { deferredExecution } from "../testing/executions.js";
import { storedUserMessage, testTurn } from "../testing/turns.js";
import { McpToolCallInterruptedError, McpToolSource, TASK_STATUS_EVENT, type McpServerConfig } from "./index.js";
import { isToolCallsRequested, isToolTaskPending, isToolTaskStarted, policyOf, toolResult } from "../values.js";

const SERVER = fileURLToPath(new URL("../testing/mcp_server.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mcp-source-"));
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill("SIGKILL");
});

interface Logged {
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly key: string | null;
}

function calls(log: string): Logged[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Logged);
}

/** An HTTP server child on a free loopback port, once it says where it listens. */
async function httpServer(name: string, stateful = false): Promise<{ config: McpServerConfig; log: string }> {
  const log = join(dir, `${name}.jsonl`);
  const child = spawn(process.execPath, [SERVER, "--log", log, "http", ...(stateful ? ["--stateful"] : [])], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [line] = (await lines[Symbol.asyncIterator]().next()).value?.split(" ").slice(1) ?? [];
  assert.ok(line?.startsWith("http://"), "the MCP server did not start");
  return { config: { kind: "http", name, url: line }, log };
}

function stdioServer(name: string): { config: McpServerConfig; log: string } {
  const log = join(dir, `${name}.jsonl`);
  return { config: { kind: "stdio", name, command: process.execPath, args: [SERVER, "--log", log, "stdio"] }, log };
}

/** A model that calls one tool, then answers. */
class OneCall implements ModelClient {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly tool: string, private readonly args: Record<string, unknown>) {}
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    return { toolCalls: [{ toolCallId: "c1", toolName: this.tool, arguments: JSON.stringify(this.args) }] };
  }
}

function record(name: string, args: Record<string, unknown>, reference: string | undefined): AgentToolCall {
  return create(AgentToolCallSchema, {
    toolCallId: "c1",
    toolName: name,
    arguments: JSON.stringify(args),
    status: ToolCallStatus.APPROVED,
    ...(reference !== undefined ? { toolSourceReference: reference } : {}),
  });
}

/** The tool Step's view: tasks supported or not, the checkpoint it saved. */
function execution(call: AgentToolCall, options: { tasks?: boolean; checkpoint?: string } = {}) {
  const saved: string[] = [];
  const base = deferredExecution(call);
  const value: DeferredToolExecution = {
    ...base,
    supportsToolTasks: options.tasks ?? false,
    heartbeatCheckpoint: options.checkpoint,
    saveHeartbeatCheckpoint: async (checkpoint) => void saved.push(checkpoint),
  };
  return { value, saved };
}

function poll(call: AgentToolCall, events: [string, string][] = []): ToolTaskPoll {
  return {
    flowId: "s1",
    toolCall: call,
    idempotencyKey: "s1/turn-1/c1",
    attempt: 1,
    inputAnswers: [],
    pendingAnswer: undefined,
    events: { write: () => {}, writeRaw: (type, payload) => void events.push([type, payload]) },
    heartbeat: async () => {},
    cancellationSignal: new AbortController().signal,
  };
}

/** Polls until the task ends: a real server's task takes real time. */
async function pollUntilDone(source: McpToolSource, call: AgentToolCall, events: [string, string][]) {
  const deadline = Date.now() + 20_000;
  let current = call;
  for (;;) {
    const outcome = await source.pollToolTask(poll(current, events));
    if (!isToolTaskPending(outcome)) return outcome;
    assert.ok(Date.now() < deadline, "the task did not end in time");
    await new Promise((resolve) => setTimeout(resolve, 100)); // the server's own clock ends the job
    current = { ...current, inputContinuation: outcome.continuation, taskPollIntervalSeconds: outcome.pollIntervalMilliseconds / 1000 };
  }
}

test("listing: <server>__<tool> names, annotation effects, task tools; an unreachable server is left out", async () => {
  const web = await httpServer("web");
  const warnings: string[] = [];
  const source = new McpToolSource({
    servers: [web.config, stdioServer("files").config, { kind: "http", name: "gone", url: "http://127.0.0.1:9/mcp" }],
    warn: (m) => void warnings.push(m),
  });
  const tools = await source.listTools({ taken: ["web__broken"] });
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ["files__broken", "files__job", "files__lookup", "files__set_flag", "web__job", "web__lookup", "web__set_flag"]);
  const byName = new Map(tools.map((t) => [t.name, t]));
  assert.equal(byName.get("web__lookup")?.effect, ToolEffect.READ);
  assert.equal(byName.get("web__set_flag")?.effect, ToolEffect.IDEMPOTENT_WRITE);
  assert.equal(byName.get("files__broken")?.effect, undefined);
  assert.deepEqual(JSON.parse(byName.get("web__job")?.reference ?? ""), { server: "web", tool: "job", task: true });
  assert.deepEqual(JSON.parse(byName.get("web__lookup")?.reference ?? ""), { server: "web", tool: "lookup" });
  assert.equal(warnings.length, 2);
  assert.match(warnings.join("\n"), /MCP server 'gone' could not be listed/);
  assert.match(warnings.join("\n"), /'broken' of server 'web' is left out: an earlier tool has that name/);
});

test("Stepwise: an MCP call is deferred with its reference, then run in its Step without a listing, with the key", async () => {
  const web = await httpServer("crm");
  const files = stdioServer("disk");
  const servers = [web.config, files.config];
  const model = new OneCall("crm__set_flag", { name: "vip" });
  const runner = new StepwiseRunner(new AgentDefinition({ model, toolSources: [new McpToolSource({ servers })] }));
  const turn = testTurn({ messages: [storedUserMessage("flag it", JSON.stringify({ type: "user", text: "flag it" }))] });
  const first = await runner.runModelStep(turn);
  assert.ok(isToolCallsRequested(first));
  if (!isToolCallsRequested(first)) return;
  assert.ok(model.requests[0]?.tools.some((t) => t.name === "disk__lookup"));
  const [call] = first.toolCalls;
  assert.deepEqual(policyOf(call!), { effect: ToolEffect.IDEMPOTENT_WRITE, requiresApproval: false });
  assert.deepEqual(JSON.parse(call?.toolSourceReference ?? ""), { server: "crm", tool: "set_flag" });

  // A fresh runner (another Worker) runs the Step from the record alone.
  const fresh = new StepwiseRunner(new AgentDefinition({ model, toolSources: [new McpToolSource({ servers })] }));
  const done = await fresh.executeDeferredToolCall(execution(record("crm__set_flag", { name: "vip" }, call?.toolSourceReference)).value);
  assert.deepEqual(done, toolResult("flag vip set"));
  assert.deepEqual(calls(web.log).map((c) => [c.tool, c.arguments, c.key]), [["set_flag", { name: "vip" }, "s1/turn-1/c1"]]);

  const overStdio = await fresh.executeDeferredToolCall(
    execution(record("disk__lookup", { city: "Oslo" }, JSON.stringify({ server: "disk", tool: "lookup" }))).value,
  );
  assert.deepEqual(overStdio, toolResult("sunny in Oslo"));
  assert.equal(calls(files.log)[0]?.key, "s1/turn-1/c1");

  // The tool's isError and an unreachable server are failures the model sees.
  await assert.rejects(
    fresh.executeDeferredToolCall(execution(record("crm__broken", {}, JSON.stringify({ server: "crm", tool: "broken" }))).value),
    (error) => error instanceof ToolExecutionError && error.message === "the service is down",
  );
  const unreachable = new StepwiseRunner(
    new AgentDefinition({ model, toolSources: [new McpToolSource({ servers: [{ kind: "http", name: "crm", url: "http://127.0.0.1:9/mcp" }] })] }),
  );
  await assert.rejects(
    unreachable.executeDeferredToolCall(execution(record("crm__lookup", { city: "x" }, JSON.stringify({ server: "crm", tool: "lookup" }))).value),
    (error) => error instanceof ToolExecutionError && /could not be reached, so 'lookup' was not called/.test(error.message),
  );
  // A reference to a server this Worker does not configure is not this source's call.
  await assert.rejects(
    fresh.executeDeferredToolCall(execution(record("evil__lookup", {}, JSON.stringify({ server: "evil", tool: "lookup" }))).value),
    /unknown tool 'evil__lookup'/,
  );
});

test("tasks: a stateless HTTP server's task is checkpointed, handed to PollToolTask, polled to its result", async () => {
  const web = await httpServer("jobs");
  const source = new McpToolSource({ servers: [web.config] });
  const runner = new StepwiseRunner(new AgentDefinition({ model: new OneCall("x", {}), toolSources: [source] }));
  const reference = JSON.stringify({ server: "jobs", tool: "job", task: true });
  const call = record("jobs__job", { ms: 600 }, reference);
  const { value, saved } = execution(call, { tasks: true });
  const started = await runner.executeDeferredToolCall(value);
  assert.ok(isToolTaskStarted(started));
  if (!isToolTaskStarted(started)) return;
  assert.equal(started.pollIntervalMilliseconds, 1000);
  assert.equal(saved.length, 1);
  // A retried attempt reads its checkpoint and starts no second task.
  const retried = await runner.executeDeferredToolCall(execution(call, { tasks: true, checkpoint: saved[0] as string }).value);
  assert.deepEqual(retried, started);
  assert.equal(calls(web.log).length, 1);
  assert.equal(calls(web.log)[0]?.key, "s1/turn-1/c1");

  const events: [string, string][] = [];
  const task = { ...call, status: ToolCallStatus.WAITING_FOR_TASK, taskId: started.taskId, taskPollIntervalSeconds: 1 };
  const done = await pollUntilDone(source, task, events);
  assert.deepEqual(done, toolResult("job done after 600 ms"));
  // One event per status change, not per poll.
  const statuses = events.filter(([t]) => t === TASK_STATUS_EVENT).map(([, p]) => (JSON.parse(p) as { status: string }).status);
  assert.deepEqual(statuses, ["working", "completed"]);

  // cancel_turn's cancel reaches the server; the next poll sees the task cancelled.
  const forever = await runner.executeDeferredToolCall(execution(record("jobs__job", { ms: -1 }, reference), { tasks: true }).value);
  assert.ok(isToolTaskStarted(forever));
  if (!isToolTaskStarted(forever)) return;
  const waiting = { ...call, taskId: forever.taskId };
  await runner.cancelToolTask({ flowId: "s1", toolCall: waiting, idempotencyKey: "k", attempt: 1, heartbeat: async () => {}, cancellationSignal: new AbortController().signal });
  await assert.rejects(runner.pollToolTask(poll(waiting)), (e) => e instanceof McpToolCallInterruptedError && /was cancelled/.test(e.message));
  // A task the server never knew fails the poll attempt (its effect decides after three).
  await assert.rejects(runner.pollToolTask(poll({ ...call, taskId: "nope" })), (e) => e instanceof McpToolCallInterruptedError);
});

test("tasks: a stateful server's, a stdio server's, and a non-polling runner's tasks finish inside the tool Step", async () => {
  const stateful = await httpServer("bound", true);
  const stateless = await httpServer("free");
  const files = stdioServer("local");
  const source = new McpToolSource({ servers: [stateful.config, stateless.config, files.config] });
  const runner = new StepwiseRunner(new AgentDefinition({ model: new OneCall("x", {}), toolSources: [source] }));
  for (const [server, tasks] of [["bound", true], ["local", true], ["free", false]] as const) {
    const beats: number[] = [];
    const { value, saved } = execution(record(`${server}__job`, { ms: 300 }, JSON.stringify({ server, tool: "job", task: true })), { tasks });
    const outcome = await runner.executeDeferredToolCall({ ...value, heartbeat: async () => void beats.push(Date.now()) });
    assert.deepEqual(outcome, toolResult("job done after 300 ms"), server);
    assert.deepEqual(saved, [], server);
    assert.ok(beats.length >= 2, `${server}: a heartbeat before the call and per poll`);
  }
});
