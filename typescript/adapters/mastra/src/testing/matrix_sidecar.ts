/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T` (under Node 22): `MastraRunner` over a Mastra `Agent` whose
 * model is a `MockLanguageModelV4` following the shared prompts of
 * `dex_agents_testing.matrix` (`aiSdkMatrixDoStream` of @dex-agents/core),
 * served by `serveRunners`. Model calls and tool runs go to the run log in
 * the matrix's JSON-lines format, each tool run with the idempotency key its
 * Dex call gives it; gate files hold the `model` and `charge` calls. Prints
 * `listening <address>` once up.
 *
 * @module
 */

import { matrixReply, matrixSidecarArgs, serveMatrixRunner } from "@dex-agents/core/testing";
import { matrixRunner } from "./matrix_app.js";

const sidecar = matrixSidecarArgs();
await serveMatrixRunner(sidecar, matrixRunner((call) => matrixReply(sidecar, call), sidecar.runLog));
