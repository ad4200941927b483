/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `PiRunner` on pi-ai's faux provider, whose response
 * factories follow the shared prompts of `dex_agents_testing.matrix`
 * (weather, parallel, book, charge, slow, fail; otherwise "I have seen N
 * messages."), served by `serveRunners`. Model calls and tool runs go to the
 * run log in the matrix's JSON-lines format; gate files hold the `model` and
 * `charge` calls. Prints `listening <address>` once up.
 *
 * @module
 */

import { matrixReply, conformanceSidecarArgs, serveConformanceRunner } from "@dex-agents/core/testing";
import { matrixRunner } from "./matrix_app.js";

const sidecar = conformanceSidecarArgs();
const runner = matrixRunner({
  reply: (call) => matrixReply(sidecar, call),
  log: (entry) => sidecar.runLog.write(entry),
  gate: (name, signal) => sidecar.runLog.waitForGate(name, signal),
});

await serveConformanceRunner(sidecar, runner);
