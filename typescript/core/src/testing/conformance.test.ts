import assert from "node:assert/strict";
import { test } from "node:test";
import { ToolEffect } from "@dex-agents/contracts";
import { ConformanceCasesError, ConformanceScript, parseConformanceCases, readConformanceCases, type ScriptLog } from "./conformance.js";

function recording(): { log: ScriptLog; entries: Record<string, unknown>[]; gates: string[] } {
  const entries: Record<string, unknown>[] = [];
  const gates: string[] = [];
  return {
    entries,
    gates,
    log: {
      write: (entry) => void entries.push(entry),
      waitForGate: async (name) => void gates.push(name),
    },
  };
}

const call = (prompts: string[], results: { toolCallId: string; toolName: string; output: string }[] = [], messageCount = 1) => ({
  prompts,
  results,
  messageCount,
});

test("the data file's tools and policies are the ones the Python reader sees", () => {
  const script = new ConformanceScript(undefined, readConformanceCases());
  assert.deepEqual(
    script.tools.map((t) => t.name),
    ["get_weather", "book_trip", "charge", "charge_now"],
  );
  assert.deepEqual(script.policies((n) => `mcp__app__${n}`)["mcp__app__book_trip"], {
    effect: ToolEffect.NON_IDEMPOTENT_WRITE,
    requiresApproval: true,
  });
  assert.deepEqual(script.policies()["get_weather"], { effect: ToolEffect.READ });
  assert.deepEqual(script.parameters("charge"), { usd: "number" });
  assert.deepEqual(script.parameters("book_trip"), { city: "string" });
  assert.ok(script.asksForOutput("city of light?"));
  assert.ok(!script.asksForOutput("weather in Paris?"));
});

test("a prompt's calls get the number of user prompts so far; results are summarised", async () => {
  const { log, entries } = recording();
  const script = new ConformanceScript(log);
  const asked = await script.answer(call(["hi", "book Rome"]));
  assert.deepEqual(
    asked.calls.map((c) => [c.id, c.name, c.input]),
    [
      ["r2", "get_weather", { city: "Rome" }],
      ["k2", "book_trip", { city: "Rome" }],
    ],
  );
  const done = await script.answer(call(["book Rome"], [{ toolCallId: "r1", toolName: "get_weather", output: "sunny in Rome" }]));
  assert.equal(done.text, "Results: get_weather=sunny in Rome");
  assert.equal((await script.answer(call(["thanks"], [], 5))).text, "I have seen 5 messages.");
  assert.deepEqual(entries[1], { kind: "model", name: "model", messages: 1, prompts: ["book Rome"], results: { r1: "sunny in Rome" } });
});

test("after results a reply waits at its gate or fails with its error", async () => {
  const { log, gates } = recording();
  const script = new ConformanceScript(log);
  const result = [{ toolCallId: "w1", toolName: "get_weather", output: "sunny in Paris" }];
  assert.equal((await script.answer(call(["slow weather"], result))).text, "Results: get_weather=sunny in Paris");
  assert.deepEqual(gates, ["model"]);
  await assert.rejects(script.answer(call(["fail after charging"], result)), /model unavailable/);
});

test("an aborted gate is logged as the model call's abort", async () => {
  const entries: Record<string, unknown>[] = [];
  const script = new ConformanceScript({
    write: (e) => void entries.push(e),
    waitForGate: async (_name, signal) => {
      throw signal?.reason ?? new Error("no signal");
    },
  });
  const controller = new AbortController();
  controller.abort(new Error("cancelled"));
  const results = [{ toolCallId: "w1", toolName: "get_weather", output: "sunny" }];
  await assert.rejects(script.answer({ ...call(["slow weather"], results), signal: controller.signal }), /cancelled/);
  assert.equal(entries.at(-1)?.["kind"], "model_aborted");
});

test("structured output: the retried answer after the validator's retry message", async () => {
  const script = new ConformanceScript();
  const first = await script.answer(call(["city of light?"]));
  assert.deepEqual(first.output, { name: "paris", country: "FR" });
  assert.equal(script.retryReason(first.output ?? {}), "Capitalize the city name.");
  const second = await script.answer(call(["city of light?", "Capitalize the city name."]));
  assert.deepEqual(second.output, { name: "Paris", country: "FR" });
  assert.equal(script.retryReason(second.output ?? {}), undefined);
  assert.deepEqual((await script.answer({ ...call(["city of light?"]), retried: true })).output, { name: "Paris", country: "FR" });
});

test("a reply that reasons answers its reasoning before the text; an app's own tool is logged", async () => {
  const { log, entries } = recording();
  const script = new ConformanceScript(log);
  const thought = await script.answer(call(["think it over"], [], 1));
  assert.deepEqual(thought, { text: "I have seen 1 messages.", calls: [], reasoning: "The user wants me to think first." });
  assert.equal((await script.answer(call(["weather?"], [], 1))).reasoning, undefined);
  script.logTool("refund", "s/turn-1/f1");
  assert.deepEqual(entries.at(-1), { kind: "tool", name: "refund", key: "s/turn-1/f1" });
});

test("a tool body logs its key, waits at its gate and fills its output", async () => {
  const { log, entries, gates } = recording();
  const script = new ConformanceScript(log);
  assert.equal(await script.runTool("charge", { usd: 5 }, "s/turn-1/p1"), "charged 5 USD");
  assert.equal(await script.runTool("get_weather", { city: "Oslo" }, undefined), "sunny in Oslo");
  assert.deepEqual(gates, ["charge"]);
  assert.deepEqual(entries, [
    { kind: "tool", name: "charge", key: "s/turn-1/p1" },
    { kind: "tool", name: "get_weather", key: null },
  ]);
  await assert.rejects(script.runTool("nope", {}, undefined), /no tool nope/);
});

test("the reader names what is out of shape", () => {
  const good = JSON.parse(JSON.stringify({ version: 1, model: { replies: [], results_text: "", otherwise_text: "" }, output: { name: "C", fields: {}, retry_unless_capitalized: "name", retry_message: "m" }, tools: {} }));
  assert.equal(parseConformanceCases(good).replies.length, 0);
  assert.throws(() => parseConformanceCases({ ...good, version: 2 }), ConformanceCasesError);
  assert.throws(() => parseConformanceCases({ ...good, tools: { t: { effect: "SOMETIMES", returns: "" } } }), /tools.t.effect: no tool effect SOMETIMES/);
  assert.throws(() => parseConformanceCases({ ...good, model: { replies: [{ calls: [] }], results_text: "", otherwise_text: "" } }), /model.replies\[0\]: missing prompt/);
});
