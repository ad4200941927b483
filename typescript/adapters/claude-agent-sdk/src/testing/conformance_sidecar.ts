/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `ClaudeAgentRunner` on the real bundled CLI, whose model is
 * the scripted loopback Messages API of this process, answering the shared
 * prompts of `dex_agents_testing.matrix` as the Python adapter's integration
 * app does (weather, parallel, book, charge, slow, fail; otherwise "I have
 * seen N messages."), plus "two bookings" (two approval-gated writes in one
 * response), served by `serveRunners`. Model calls and tool runs go
 * to the run log in the matrix's JSON-lines format; gate files hold the
 * `slow` model call and the `charge` tool. Prints `listening <address>`.
 *
 * @module
 */

import { conformanceSidecarArgs, noteModelReply, serveConformanceRunner } from "@dex-agents/core/testing";
import { FakeMessagesServer } from "./fake_messages.js";
import { matrixRespond, matrixRunner } from "./matrix_app.js";

const sidecar = conformanceSidecarArgs();
const respond = matrixRespond(sidecar.runLog);
const server = await FakeMessagesServer.start(async (request) => {
  const reply = await respond(request);
  noteModelReply(reply);
  return reply;
});

await serveConformanceRunner(sidecar, matrixRunner(server.baseUrl, sidecar.runLog), () => server.close());
