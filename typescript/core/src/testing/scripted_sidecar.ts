/**
 * `node dist/testing/scripted_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T [--flow-type U ...] [--runner tasks]`: serves the scripted
 * runner (with `--runner tasks` the ScriptedTaskRunner) under each Flow type
 * and prints `listening <address>` once the service is up.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { serveRunners } from "../serve.js";
import { ScriptedRunner } from "./scripted_runner.js";
import { ScriptedTaskRunner } from "./scripted_task_runner.js";

const { values } = parseArgs({
  options: {
    address: { type: "string", default: "127.0.0.1:0" },
    log: { type: "string" },
    "flow-type": { type: "string", multiple: true },
    "heartbeat-ms": { type: "string" },
    runner: { type: "string", default: "scripted" },
  },
});
if (values.log === undefined || values["flow-type"] === undefined) {
  throw new Error("say --log PATH and at least one --flow-type");
}
if (values.runner !== "scripted" && values.runner !== "tasks") {
  throw new Error(`--runner is scripted or tasks, not ${JSON.stringify(values.runner)}`);
}
const runner = values.runner === "tasks" ? new ScriptedTaskRunner(values.log) : new ScriptedRunner(values.log);
const server = await serveRunners({
  runners: Object.fromEntries(values["flow-type"].map((t) => [t, runner])),
  address: values.address,
  ...(values["heartbeat-ms"] !== undefined ? { heartbeatIntervalMs: Number(values["heartbeat-ms"]) } : {}),
});
process.stdout.write(`listening ${server.address}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
