// The run states today's adapter stored in real sessions (fixtures/run_states, recorded by
// python/conformance/tests/record_ts_run_states.py) resume to the recorded next action.
import { test } from "node:test";
import {
  assertRunStatePointsUnsupported,
  ConformanceScript,
  fixtureReply,
  readRunStateFixtures,
  resumeRunStateFixture,
  type RunStatePoint,
  type ScriptedAnswer,
} from "@dex-agents/core/testing";
import { conformanceRunner } from "./testing/conformance_app.js";

const directory = new URL("../fixtures/run_states/", import.meta.url);
const recorded: RunStatePoint[] = [
  "awaiting_tool_result",
  "awaiting_approval",
  "mid_plan",
  "after_compaction",
];
/** The points this adapter cannot reach, and why (its describe() must agree). */
const unsupported: Partial<Record<RunStatePoint, string>> = {
  after_handoff: "one AgentDefinition per runner; the Stepwise loop has no handoff",
};
const fixtures = readRunStateFixtures(directory, "mastra", recorded);

for (const fixture of fixtures) {
  test(`the ${fixture.point} run state resumes to its recorded next action`, () =>
    resumeRunStateFixture<ScriptedAnswer>(fixture, (script) => conformanceRunner(new ConformanceScript(), fixtureReply(fixture, script))));
}

const noModel = async (): Promise<ScriptedAnswer> => {
  throw new Error("the capability check calls no model");
};

test("the points this adapter cannot reach are the capabilities it declares unsupported", () =>
  assertRunStatePointsUnsupported(directory, recorded, unsupported, conformanceRunner(new ConformanceScript(), noModel)));
