/**
 * `node dist/testing/scripted_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T [--flow-type U ...]`: serves the scripted runner under each
 * Flow type and prints `listening <address>` once the service is up.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { serveRunners } from "../serve.js";
import { ScriptedRunner } from "./scripted_runner.js";

const { values } = parseArgs({
  options: {
    address: { type: "string", default: "127.0.0.1:0" },
    log: { type: "string" },
    "flow-type": { type: "string", multiple: true },
    "heartbeat-ms": { type: "string" },
  },
});
if (values.log === undefined || values["flow-type"] === undefined) {
  throw new Error("say --log PATH and at least one --flow-type");
}
const runner = new ScriptedRunner(values.log);
const server = await serveRunners({
  runners: Object.fromEntries(values["flow-type"].map((t) => [t, runner])),
  address: values.address,
  ...(values["heartbeat-ms"] !== undefined ? { heartbeatIntervalMs: Number(values["heartbeat-ms"]) } : {}),
});
process.stdout.write(`listening ${server.address}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
