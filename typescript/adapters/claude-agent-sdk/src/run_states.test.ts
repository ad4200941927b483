// The run states today's ClaudeAgentRunner stored in real sessions (fixtures/run_states,
// recorded by python/conformance/tests/record_ts_run_states.py) resume to the recorded next
// action, the real bundled CLI answered by the fixture's model script.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  assertRunStatePointsUnsupported,
  ConformanceScript,
  readRunStateFixtures,
  resumeRunStateFixture,
  type ModelScript,
  type RunStateFixture,
  type RunStatePoint,
} from "@dex-agents/core/testing";
import { FakeMessagesServer, type ScriptedReply } from "./testing/fake_messages.js";
import { conformanceRunner } from "./testing/conformance_app.js";
import { owesAnswer, turnResults } from "./testing/script.js";

const directory = new URL("../fixtures/run_states/", import.meta.url);
const recorded: RunStatePoint[] = [
  "awaiting_tool_result",
  "awaiting_approval",
];
/** The points this adapter cannot reach, and why (its describe() must agree). */
const unsupported: Partial<Record<RunStatePoint, string>> = {
  mid_plan: "ClaudeAgentRunner declares no planning turns (plan_mode not implemented)",
  after_compaction: "ClaudeAgentRunner offers no token estimate, cutoff or summary call (compaction)",
  after_handoff: "Claude's sub-agents run inside the CLI as a tool, not as a handoff of the turn",
};
const fixtures = readRunStateFixtures(directory, "claude-agent-sdk", recorded);

/** The fixture being resumed and its script, which the loopback Messages API answers from. */
let current: { fixture: RunStateFixture; script: ModelScript<ScriptedReply> } | undefined;
let server: FakeMessagesServer;

before(async () => {
  server = await FakeMessagesServer.start((request) => {
    assert.ok(current !== undefined, "a model call outside a resumed fixture");
    const { fixture, script } = current;
    if (script.used === 0) {
      // The CLI resumed from the stored transcript owes an answer to the deferred calls' results.
      assert.ok(owesAnswer(request), `${fixture.file}: the resumed model call owes an answer`);
      const seen = new Map(turnResults(request).map(([id, , text]) => [id, text]));
      for (const call of fixture.turnContext.toolCalls) {
        assert.equal(seen.get(call.toolCallId), call.output, `${fixture.file}: the result of ${call.toolCallId} the model saw`);
      }
    }
    return script.next();
  });
});

after(() => server.close());

for (const fixture of fixtures) {
  test(`the ${fixture.point} run state resumes to its recorded next action`, () =>
    resumeRunStateFixture<ScriptedReply>(fixture, (script) => {
      current = { fixture, script };
      return conformanceRunner(server.baseUrl, new ConformanceScript());
    }));
}

test("the points this adapter cannot reach are the capabilities it declares unsupported", () =>
  assertRunStatePointsUnsupported(directory, recorded, unsupported, conformanceRunner("http://127.0.0.1:9", new ConformanceScript())));
