/**
 * Recording of run-state fixtures in a conformance sidecar. With
 * `DEX_AGENTS_RECORD_TURN_CONTEXT=<dir>` set, `serveConformanceRunner` wraps its
 * runner so every RunModelStep of a real session writes `<dir>/<n>.json`:
 * the call's `RunnerTurnContext` wire JSON, the replies the scripted model
 * gave in it (`noteModelReply`) and the normalised outcome. The recorder
 * (python/conformance/tests/record_ts_run_states.py) picks the call of a point and
 * writes the fixture; `run_state_fixtures.ts` resumes it.
 *
 * @module
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { encodeRunnerTurnContext, RunnerToolPolicySchema, RunnerTurnContextSchema, type RunnerTurnContext } from "@dex-agents/contracts";
import { runModelStepResponse } from "../handlers.js";
import type { AgentFrameworkRunner, AgentTurnContext, DeferredToolOutcome } from "../runner.js";
import { normalizedOutcome } from "./run_state_fixtures.js";

/** The sidecar's environment variable: the directory recorded calls go to. */
export const RECORD_TURN_CONTEXT_VARIABLE = "DEX_AGENTS_RECORD_TURN_CONTEXT";

/** The replies of the model call being recorded, or undefined when none is. */
let replies: unknown[] | undefined;

/**
 * A scripted model's reply (in its test app's own JSON form), kept for the
 * RunModelStep being recorded. A no-op unless the sidecar records.
 */
export function noteModelReply(reply: unknown): void {
  replies?.push(JSON.parse(JSON.stringify(reply)));
}

/**
 * The wire form of the turn a runner was given: the inverse of core's
 * `turnContext` (its messages, tool calls, plan and summary are the wire
 * messages themselves; the policies travel back as the list they came as).
 */
export function wireTurnContext(turn: AgentTurnContext): RunnerTurnContext {
  return create(RunnerTurnContextSchema, {
    flowId: turn.flowId,
    turnId: turn.turnId,
    attempt: turn.attempt,
    messages: [...turn.messages],
    frameworkRunState: turn.frameworkRunState,
    toolCalls: [...turn.toolCalls],
    toolPolicies: [...turn.toolPolicies].map(([toolName, p]) =>
      create(RunnerToolPolicySchema, { toolName, effect: p.effect, requiresApproval: p.requiresApproval }),
    ),
    defaultToolEffect: turn.defaultToolEffect,
    enabledBuiltInTools: [...turn.enabledBuiltInTools],
    sessionSettings: { ...turn.sessionSettings },
    interactionMode: turn.interactionMode,
    plan: turn.plan,
    contextSummary: turn.contextSummary,
  });
}

/**
 * `runner` with its RunModelSteps recorded into `directory`, one file per
 * answered call in call order. Calls must not overlap (one session at a
 * time), since the model's replies are attributed to the running call.
 */
export function recordingRunner(
  runner: AgentFrameworkRunner<DeferredToolOutcome>,
  directory: string,
): AgentFrameworkRunner<DeferredToolOutcome> {
  mkdirSync(directory, { recursive: true });
  let count = 0;
  const runModelStep = async (turn: AgentTurnContext) => {
    if (replies !== undefined) throw new Error("recorded RunModelSteps must not overlap; run one session at a time");
    const seen: unknown[] = [];
    replies = seen;
    try {
      const outcome = await runner.runModelStep(turn);
      count += 1;
      const record = {
        turn_context: JSON.parse(encodeRunnerTurnContext(wireTurnContext(turn))) as unknown,
        model_script: seen,
        expected: normalizedOutcome(runModelStepResponse(outcome)),
      };
      writeFileSync(join(directory, `${String(count).padStart(4, "0")}.json`), `${JSON.stringify(record, null, 2)}\n`);
      return outcome;
    } finally {
      replies = undefined;
    }
  };
  // A Proxy, not a subclass: the runner's optional methods (and private fields) stay its own.
  return new Proxy(runner, {
    get(target, property) {
      if (property === "runModelStep") return runModelStep;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" && property !== "constructor" ? value.bind(target) : value;
    },
  });
}
