/**
 * `node dist/testing/launched_agents.js --server ADDR --log PATH --flow-type T
 * --python PY --address HOST:PORT [--session-options JSON]`: the one-command
 * setup a TypeScript user runs: the scripted runner served by `serveRunners`
 * (with the `SessionOptions` of the JSON, if given) and the Python Worker
 * started by `launchWorker`. Logs a `worker` entry (its pid) after each
 * Worker (re)start.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { launchWorker } from "../launcher.js";
import { serveRunners } from "../serve.js";
import type { SessionOptions } from "../session_options.js";
import { ScriptedRunner } from "./scripted_runner.js";

const { values } = parseArgs({
  options: {
    server: { type: "string" },
    log: { type: "string" },
    "flow-type": { type: "string" },
    python: { type: "string" },
    address: { type: "string", default: "127.0.0.1:0" },
    "session-options": { type: "string" },
  },
});
if (values.server === undefined || values.log === undefined || values["flow-type"] === undefined) {
  throw new Error("say --server ADDR --log PATH --flow-type T");
}
const flowType = values["flow-type"];
const runner = new ScriptedRunner(values.log);
const sessionOptions = values["session-options"];
const server = await serveRunners({
  runners: { [flowType]: runner },
  address: values.address,
  ...(sessionOptions !== undefined
    ? { sessionOptions: { [flowType]: JSON.parse(sessionOptions) as SessionOptions } }
    : {}),
});
const worker = await launchWorker({
  serverAddress: values.server,
  runnerTarget: server.address,
  flowTypes: [flowType],
  ...(values.python !== undefined ? { python: values.python } : {}),
  onReady: (pid) => runner.log.append("worker", { pid }),
});
process.on("SIGTERM", () => {
  void worker.stop().then(() => server.close()).then(() => process.exit(0));
});
