/**
 * What every adapter's conformance sidecar shares (`node dist/testing/conformance_sidecar.js
 * --address HOST:PORT --log PATH --flow-type T [--factory NAME]`, started by the Python conformance
 * runner, python/conformance): its command line, the data file's script logging to
 * the run log with its gate files, and how it serves one runner, says
 * `listening <address>` and ends on SIGTERM. Each adapter keeps only its app factory.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { AgentFrameworkRunner, DeferredToolOutcome } from "../runner.js";
import { serveRunners } from "../serve.js";
import { RECORD_TURN_CONTEXT_VARIABLE, recordingRunner } from "./run_state_recorder.js";
import { ConformanceScript } from "./conformance.js";
import { RunLog } from "./runlog.js";

/**
 * The run-state recorder's own prompt (python/conformance/tests/record_ts_run_states.py,
 * mid_plan): a planning turn's first call writes the plan.
 */
const RECORDER_REPLIES = [
  { prompt: "plan ", calls: [{ id: "t", name: "write_todos", input: { todos: [{ content: "visit Lima", status: "pending" }] } }] },
];

export interface ConformanceSidecarArgs {
  readonly address: string;
  readonly flowType: string;
  /**
   * The Worker's app factory for the case (`build_flow`, or a `Traits.factories` entry
   * such as `build_structured_flow`), for a framework that fixes per agent what the case needs.
   */
  readonly factory: string;
  readonly runLog: RunLog;
  /** The data file's model and tools, logging to `runLog`. */
  readonly script: ConformanceScript;
}

export function conformanceSidecarArgs(): ConformanceSidecarArgs {
  const { values } = parseArgs({
    options: {
      address: { type: "string", default: "127.0.0.1:0" },
      log: { type: "string" },
      "flow-type": { type: "string" },
      factory: { type: "string", default: "build_flow" },
    },
  });
  const log = values.log;
  const flowType = values["flow-type"];
  if (log === undefined || flowType === undefined) throw new Error("say --log PATH --flow-type T");
  const runLog = new RunLog(log);
  return { address: values.address, flowType, factory: values.factory, runLog, script: new ConformanceScript(runLog, undefined, RECORDER_REPLIES) };
}

/**
 * Serves `runner` under the sidecar's Flow type; `afterClose` runs once the service stopped on SIGTERM.
 * With `DEX_AGENTS_RECORD_TURN_CONTEXT=<dir>` its RunModelSteps are recorded there (run_state_recorder.ts).
 */
export async function serveConformanceRunner(
  args: ConformanceSidecarArgs,
  runner: AgentFrameworkRunner<DeferredToolOutcome>,
  afterClose: () => unknown = () => undefined,
): Promise<void> {
  const record = process.env[RECORD_TURN_CONTEXT_VARIABLE];
  const served = record ? recordingRunner(runner, record) : runner;
  const server = await serveRunners({ runners: { [args.flowType]: served }, address: args.address });
  process.stdout.write(`listening ${server.address}\n`);
  process.on("SIGTERM", () => void server.close().then(afterClose).then(() => process.exit(0)));
}
