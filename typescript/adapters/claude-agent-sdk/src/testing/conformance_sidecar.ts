/**
 * `node dist/testing/conformance_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `ClaudeAgentRunner` on the real bundled CLI, whose model is
 * this process's loopback Messages API answering as the conformance data
 * file's script says (conformance_app.ts), served by `serveRunners` for the
 * Python conformance runner (python/conformance). The run-state recorder notes
 * the Messages replies. Prints `listening <address>` once up.
 *
 * @module
 */

import { conformanceSidecarArgs, noteModelReply, serveConformanceRunner } from "@dex-agents/core/testing";
import { FakeMessagesServer } from "./fake_messages.js";
import { conformanceRespond, conformanceRunner } from "./conformance_app.js";

const sidecar = conformanceSidecarArgs();
const respond = conformanceRespond(sidecar.script);
const server = await FakeMessagesServer.start(async (request) => {
  const reply = await respond(request);
  noteModelReply(reply);
  return reply;
});

await serveConformanceRunner(sidecar, conformanceRunner(server.baseUrl, sidecar.script), () => server.close());
