// The run states today's OpenAiAgentsRunner stored in real sessions (fixtures/run_states,
// recorded by python/core/tests/record_ts_run_states.py) resume to the recorded next
// action; after a handoff the forecaster, not the first agent, answers.
import { test } from "node:test";
import { matrixFixtureReply, readRunStateFixtures, resumeRunStateFixture, type MatrixReply } from "@dex-agents/core/testing";
import { matrixRunner } from "./testing/matrix_app.js";

const fixtures = readRunStateFixtures(new URL("../fixtures/run_states/", import.meta.url), "openai-agents", [
  "awaiting_tool_result",
  "awaiting_approval",
  "after_handoff",
]);

for (const fixture of fixtures) {
  test(`the ${fixture.point} run state resumes to its recorded next action`, () =>
    resumeRunStateFixture<MatrixReply>(fixture, (script) =>
      matrixRunner(matrixFixtureReply(fixture, script), { write: () => {}, waitForGate: async () => {} }),
    ));
}
