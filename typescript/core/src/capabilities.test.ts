import assert from "node:assert/strict";
import { MessageRole } from "@dex-agents/contracts";
import { test } from "node:test";
import {
  AgentDefinition,
  CAPABILITIES,
  declareCapabilities,
  describeRunner,
  StepwiseRunner,
  supports,
  type AgentFrameworkRunner,
  type Capability,
} from "./index.js";
import { frameworkMessage, toolResult, turnCompleted } from "./values.js";

const EVERY_OTHER = (supported: readonly Capability[]): Partial<Record<Capability, string>> =>
  Object.fromEntries(CAPABILITIES.filter((c) => !supported.includes(c)).map((c) => [c, `no ${c}`]));

test("a declaration names every capability once, each gap with a reason", () => {
  const capabilities = declareCapabilities({ supported: ["usage"], unsupported: EVERY_OTHER(["usage"]) });
  assert.equal(supports(capabilities, "usage"), true);
  assert.equal(supports(capabilities, "text_deltas"), false);
  assert.deepEqual(
    capabilities.gaps.map((g) => g.capability),
    CAPABILITIES.filter((c) => c !== "usage"),
  );
  assert.throws(
    () => declareCapabilities({ supported: ["usage"], unsupported: {} }),
    /neither supported nor given a reason: text_deltas/,
  );
  assert.throws(
    () => declareCapabilities({ supported: ["usage"], unsupported: { ...EVERY_OTHER(["usage"]), usage: "x" } }),
    /listed twice: usage/,
  );
  assert.throws(
    () => declareCapabilities({ supported: [], unsupported: { ...EVERY_OTHER([]), tracing: " " } }),
    /unsupported without a reason: tracing/,
  );
});

const bare: AgentFrameworkRunner = {
  buildUserMessage: (text) => (frameworkMessage({ role: MessageRole.USER, frameworkItem: text })),
  runModelStep: async () => (turnCompleted({ newMessages: [] })),
  executeDeferredToolCall: async () => (toolResult("")),
};

test("a runner without describe() gets what its methods imply; a false declaration is refused", () => {
  const implied = describeRunner({ ...bare, cancelToolTask: async () => {} });
  assert.equal(implied.toolTaskCancels, true);
  assert.equal(implied.toolTaskPolls, false);
  assert.match(implied.gaps.find((g) => g.capability === "text_deltas")?.reason ?? "", /no describe\(\)/);
  const claims = declareCapabilities({ supported: ["tool_task_polls"], unsupported: EVERY_OTHER(["tool_task_polls"]) });
  assert.throws(() => describeRunner({ ...bare, describe: () => claims }), /does not implement: tool_task_polls/);
});

test("the TypeScript Stepwise loop declares MCP sources, tool tasks and structured output; handoffs with a reason", () => {
  const runner = new StepwiseRunner(new AgentDefinition({ model: { complete: async () => ({}) } as never, instructions: "" }));
  const capabilities = describeRunner(runner);
  assert.equal(capabilities.planMode, true);
  assert.equal(capabilities.compaction, true);
  assert.equal(capabilities.mcpSources, true);
  assert.equal(capabilities.structuredOutput, true);
  assert.equal(capabilities.toolTaskPolls, true);
  assert.equal(typeof (runner as AgentFrameworkRunner).pollToolTask, "function");
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.deepEqual([...reasons.keys()], ["handoffs"]);
});
