// The run states today's PiRunner stored in real sessions (fixtures/run_states, recorded by
// python/core/tests/record_ts_run_states.py) resume to the recorded next action.
import { test } from "node:test";
import { matrixFixtureReply, readRunStateFixtures, resumeRunStateFixture, type MatrixReply } from "@dex-agents/core/testing";
import { matrixRunner } from "./testing/matrix_app.js";

const fixtures = readRunStateFixtures(new URL("../fixtures/run_states/", import.meta.url), "pi", [
  "awaiting_tool_result",
  "awaiting_approval",
]);

for (const fixture of fixtures) {
  test(`the ${fixture.point} run state resumes to its recorded next action`, () =>
    resumeRunStateFixture<MatrixReply>(fixture, (script) =>
      matrixRunner({ reply: matrixFixtureReply(fixture, script), log: () => {}, gate: async () => {} }),
    ));
}
