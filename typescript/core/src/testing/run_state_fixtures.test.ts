import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import {
  decodeRunModelStepResponse,
  decodeRunnerTurnContext,
  encodeRunModelStepRequest,
  encodeRunModelStepResponse,
  encodeRunnerTurnContext,
  RunModelStepRequestSchema,
  type RunModelStepResponse,
  MessageRole,
} from "@dex-agents/contracts";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { serveRunners, type AgentFrameworkRunner, type AgentTurnOutcome, type ToolExecutionResult } from "../index.js";
import {
  ModelScript,
  noteModelReply,
  readRunStateFixture,
  readRunStateFixtures,
  recordingRunner,
  resumeRunStateFixture,
  sha256,
} from "./index.js";
import { deferredToolCall, frameworkMessage, toolCallsRequested, toolResult, turnCompleted } from "../values.js";

const work = mkdtempSync(join(tmpdir(), "run-states-"));
after(() => rmSync(work, { recursive: true, force: true }));

// A planning turn with a summary, mixed policies and a finished tool call: every field the recorder rebuilds.
const SENT = {
  flow_id: "session-1",
  turn_id: "turn-1",
  attempt: 2,
  messages: [
    {
      sequence: 5,
      turn_id: "turn-1",
      role: "user",
      text: "weather in Lima?",
      framework_item: '{"role":"user","content":"weather in Lima?"}',
      created_at: "2026-12-04T12:00:00.123Z",
    },
  ],
  framework_run_state: '{"items":[{"call":"w1"}]}',
  tool_calls: [
    {
      tool_call_id: "w1",
      turn_id: "turn-1",
      tool_name: "get_weather",
      arguments: '{"city":"Lima"}',
      effect: "read",
      status: "succeeded",
      output: "sunny in Lima",
    },
  ],
  tool_policies: [
    { tool_name: "book_trip", effect: "non_idempotent_write", requires_approval: true },
    { tool_name: "get_weather", effect: "read" },
  ],
  default_tool_effect: "unclassified",
  enabled_built_in_tools: ["write_todos"],
  session_settings: { model: "m", temperature: 0.5 },
  interaction_mode: "planning",
  context_summary: { generation: 1, first_sequence: 1, last_sequence: 4, text: "Earlier: Oslo.", created_at: "2026-12-04T12:00:00.123Z" },
};

/** Answers by the script it is built around: the model's reply is the whole answer. */
function scriptedRunner(script: ModelScript<{ text?: string; calls?: string[] }>): AgentFrameworkRunner<ToolExecutionResult> {
  return {
    buildUserMessage: (text) => frameworkMessage({ role: MessageRole.USER, frameworkItem: JSON.stringify({ text }), text }),
    buildUnfinishedTurnMessages: () => [],
    async executeDeferredToolCall() {
      return toolResult("");
    },
    async runModelStep(turn): Promise<AgentTurnOutcome> {
      assert.ok(turn.frameworkRunState?.includes("w1"), "the run state reached the runner");
      const reply = script.next();
      noteModelReply(reply);
      if (reply.calls !== undefined) {
        return toolCallsRequested({
          frameworkRunState: "{}",
          toolCalls: reply.calls.map((name, i) => deferredToolCall({ toolCallId: `c${i}`, toolName: name, arguments: '{ "city": "Lima" }' }, turn.resolveToolPolicy(name))),
        });
      }
      return turnCompleted({ newMessages: [{ role: MessageRole.ASSISTANT, frameworkItem: "{}", text: reply.text }] });
    },
  };
}

async function sendRunModelStep(address: string): Promise<RunModelStepResponse[]> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const request = create(RunModelStepRequestSchema, { flowType: "Rec", turn: decodeRunnerTurnContext(JSON.stringify(SENT)) });
  const call = client.makeServerStreamRequest(
    "/dex.agents.v1.AgentFrameworkRunnerService/RunModelStep",
    (text: string) => Buffer.from(text),
    (b: Buffer) => decodeRunModelStepResponse(b),
    encodeRunModelStepRequest(request),
  );
  const seen: RunModelStepResponse[] = [];
  await new Promise<void>((resolve, reject) => {
    call.on("data", (frame: RunModelStepResponse) => seen.push(frame));
    call.on("end", resolve);
    call.on("error", reject);
  });
  client.close();
  return seen;
}

async function recordOne(directory: string): Promise<Record<string, unknown>> {
  const script = new ModelScript([{ calls: ["get_weather"] }]);
  const server = await serveRunners({ runners: { Rec: recordingRunner(scriptedRunner(script), directory) } });
  try {
    const frames = await sendRunModelStep(server.address);
    const last = frames.at(-1);
    assert.ok(last?.toolCallsRequested !== undefined, last === undefined ? "no frame" : encodeRunModelStepResponse(last));
  } finally {
    await server.close();
  }
  assert.deepEqual(readdirSync(directory), ["0001.json"]);
  return JSON.parse(readFileSync(join(directory, "0001.json"), "utf8")) as Record<string, unknown>;
}

test("the recorder writes the wire turn the sidecar received, the model's replies and the next action", async () => {
  const record = await recordOne(join(work, "rec"));
  const wire = JSON.parse(encodeRunnerTurnContext(decodeRunnerTurnContext(JSON.stringify(SENT)))) as unknown;
  assert.deepEqual(record["turn_context"], wire);
  assert.deepEqual(record["model_script"], [{ calls: ["get_weather"] }]);
  assert.deepEqual(record["expected"], { kind: "tool_calls_requested", calls: [{ tool_name: "get_weather", arguments: { city: "Lima" } }] });
});

test("the recording runner keeps the runner's optional methods", () => {
  const wrapped = recordingRunner(scriptedRunner(new ModelScript([])), join(work, "unused"));
  assert.equal(typeof wrapped.buildUnfinishedTurnMessages, "function");
  assert.equal(typeof wrapped.pollToolTask, "undefined");
});

/** A fixture file made from a record, as the Python recorder writes it. */
function fixtureFile(directory: string, record: Record<string, unknown>, point: string, edit: (f: Record<string, unknown>) => void = () => {}): string {
  const turn = record["turn_context"] as { framework_run_state: string };
  const fixture: Record<string, unknown> = {
    adapter: "test",
    point,
    recorded_at: "2026-12-07",
    recorded_with: { framework: "none 0", dex_agents_commit: "0".repeat(40) },
    framework_run_state_sha256: sha256(turn.framework_run_state),
    ...record,
  };
  edit(fixture);
  const file = join(directory, `${point}.json`);
  writeFileSync(file, JSON.stringify(fixture));
  return file;
}

test("a fixture resumes through the RunModelStep handler to its recorded action", async () => {
  const record = await recordOne(join(work, "rec2"));
  const directory = mkdtempSync(join(work, "fixtures-"));
  fixtureFile(directory, record, "awaiting_tool_result");
  const [fixture] = readRunStateFixtures(pathToFileURL(`${directory}/`), "test", ["awaiting_tool_result"]);
  assert.ok(fixture !== undefined);
  await resumeRunStateFixture(fixture, scriptedRunner);
  // Another next action, or a script left unused, fails.
  const other = { ...fixture, modelScript: [{ text: "done" }] };
  await assert.rejects(resumeRunStateFixture(other, scriptedRunner), /the resumed run's next action/);
  const longer = { ...fixture, modelScript: [...fixture.modelScript, { text: "more" }] };
  await assert.rejects(resumeRunStateFixture(longer, scriptedRunner), /model calls of the resumed run/);
  assert.throws(() => readRunStateFixtures(pathToFileURL(`${directory}/`), "test", ["awaiting_approval"]), /run-state fixtures/);
});

test("a rewritten or empty run state fails the read with the reason", async () => {
  const record = await recordOne(join(work, "rec3"));
  const directory = mkdtempSync(join(work, "bad-"));
  const rewritten = fixtureFile(directory, record, "awaiting_tool_result", (f) => {
    (f["turn_context"] as Record<string, unknown>)["framework_run_state"] = '{"items":[{"call":"w2"}]}';
  });
  assert.throws(() => readRunStateFixture(rewritten), /its sha256 differs/);
  const empty = fixtureFile(directory, record, "awaiting_approval", (f) => {
    (f["turn_context"] as Record<string, unknown>)["framework_run_state"] = null;
  });
  assert.throws(() => readRunStateFixture(empty), /carries no framework run state/);
});
