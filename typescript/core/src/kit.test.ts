// The seam kit every TypeScript adapter shares: the run-state envelope and its
// version errors, tool argument parsing and output text, the tool Step identity.
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { AgentToolCallSchema, ToolEffect } from "@dex-agents/contracts";
import { dexRunInfo, runInfoOfToolStep, storedResult, withRunInfo, withStoredResults } from "./run_info.js";
import { RunStateError } from "./errors.js";
import { RunStateFormat } from "./run_state.js";
import { ToolExecutionError } from "./runner.js";
import { InvalidToolCallIdError, ToolRouter } from "./routing.js";
import { parseToolArguments, toolOutputText } from "./tool_values.js";
import { deferredExecution } from "./testing/executions.js";
import { testTurn } from "./testing/turns.js";
import { policyOf } from "./values.js";

const read = (payload: Record<string, unknown>): number => {
  if (typeof payload["n"] !== "number") throw new TypeError("n is not a number");
  return payload["n"];
};

test("a run state round-trips through the envelope, which names the adapter and the schema version", () => {
  const format = new RunStateFormat({ adapter: "mine", schemaVersion: 2 });
  const text = format.encode({ n: 7 });
  assert.equal(format.decode(text, read), 7);
  const envelope = JSON.parse(text) as Record<string, unknown>;
  assert.equal(envelope["adapter"], "mine");
  assert.equal(envelope["schema_version"], 2);
});

test("another adapter's state, or another schema version, fails with a RunStateError naming both versions", () => {
  const mine = new RunStateFormat({ adapter: "mine", schemaVersion: 2 });
  const theirs = new RunStateFormat({ adapter: "theirs", schemaVersion: 5 }).encode({ n: 1 });
  assert.throws(() => mine.decode(theirs, read), (e: unknown) => {
    assert.ok(e instanceof RunStateError);
    assert.match(e.message, /not written by the mine adapter but by theirs \(schema version 5.*reads schema version 2/);
    return true;
  });
  const older = new RunStateFormat({ adapter: "mine", schemaVersion: 1 }).encode({ n: 1 });
  assert.throws(() => mine.decode(older, read), /schema version 1 .*cannot read: it reads schema version 2/);
  assert.throws(() => mine.decode(mine.encode({ n: "x" }), read), /unreadable mine run state \(schema version 2\): n is not a number/);
});

test("a state written before the envelope resumes through the legacy reader, and only then", () => {
  const legacy = (parsed: unknown) => (Array.isArray(parsed) ? { n: parsed.length } : undefined);
  const format = new RunStateFormat({ adapter: "mine", legacy });
  assert.equal(format.decode("[1,2,3]", read), 3);
  assert.throws(() => format.decode('{"other":1}', read), /no run state envelope nor an earlier mine layout/);
  assert.throws(() => format.decode("not json", read), RunStateError);
  const marked = new RunStateFormat({ adapter: "mine", legacy: RunStateFormat.marked("version", 1) });
  assert.equal(marked.decode('{"version":1,"n":4}', read), 4);
  assert.throws(() => marked.decode('{"version":2,"n":4}', read), /no run state envelope nor an earlier mine layout/);
});

test("tool arguments are a strict JSON object, empty text none; output text is JSON unless it is text", () => {
  assert.deepEqual(parseToolArguments('{"a":1}'), { a: 1 });
  assert.deepEqual(parseToolArguments(""), {});
  for (const bad of ["[1]", "3", "{", "null"]) {
    assert.throws(() => parseToolArguments(bad), (e: unknown) => e instanceof ToolExecutionError && e.message === "arguments must be a JSON object");
  }
  assert.equal(toolOutputText("sunny"), "sunny");
  assert.equal(toolOutputText({ a: [1] }), '{"a":[1]}');
  assert.equal(toolOutputText(undefined), "");
});

test("a tool body reads its Step's identity, and a gated body its stored result", async () => {
  const call = deferredExecution(create(AgentToolCallSchema, { toolCallId: "c1", toolName: "t", arguments: "{}" }));
  assert.equal(dexRunInfo(), undefined);
  const key = await withRunInfo(runInfoOfToolStep(call), async () => dexRunInfo()?.idempotencyKey);
  assert.equal(key, call.idempotencyKey);
  assert.equal(await withStoredResults(new Map([["c1", "done"]]), async () => storedResult("t", "c1")), "done");
  assert.throws(() => storedResult("t", "c1"), /without a stored result/);
});

test("the router refuses an empty, slashed or reused call ID, and resolves policies in order", () => {
  const recorded = create(AgentToolCallSchema, { toolCallId: "old", toolName: "t" });
  const turn = testTurn({ messages: [], toolCalls: [recorded], enabledBuiltInTools: ["ask_user"] });
  const router = new ToolRouter(turn, {
    toolPolicies: { pay: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false } },
    defaultToolEffect: ToolEffect.READ,
    takenIds: ["pending"],
  });
  for (const [id, fault] of [
    ["", /empty tool call ID/],
    ["a/b", /contains '\/'/],
    ["old", /reuses a tool call ID/],
    ["pending", /reuses a tool call ID/],
  ] as const) {
    assert.throws(
      () => router.defer({ toolCallId: id, toolName: "t", arguments: "{}" }),
      (e: unknown) => e instanceof InvalidToolCallIdError && e.toolCallId === id && fault.test(e.message),
    );
  }
  const first = router.defer({ toolCallId: "c1", toolName: "pay", arguments: "{}", frameworkEffect: ToolEffect.READ });
  assert.deepEqual(policyOf(first!), { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false });
  assert.throws(() => router.defer({ toolCallId: "c1", toolName: "t", arguments: "{}" }), /reuses/);
  const declared = router.defer({ toolCallId: "c2", toolName: "t", arguments: "{}", frameworkEffect: ToolEffect.IDEMPOTENT_WRITE, toolSourceReference: "ref" });
  assert.deepEqual(policyOf(declared!), { effect: ToolEffect.IDEMPOTENT_WRITE, requiresApproval: false });
  assert.equal(declared.toolSourceReference, "ref");
  assert.deepEqual(router.policy("other"), { effect: ToolEffect.READ, requiresApproval: false });
  assert.deepEqual(router.policy("pay_alias", { policyName: "pay" }).effect, ToolEffect.NON_IDEMPOTENT_WRITE);
  assert.deepEqual(router.policy("ask_user", { frameworkEffect: ToolEffect.NON_IDEMPOTENT_WRITE }), { effect: ToolEffect.READ, requiresApproval: false });
});
