/**
 * `node dist/testing/matrix_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: `OpenAiAgentsRunner` with a `ScriptedModel` that follows
 * the shared prompts of `dex_agents_testing.matrix` (weather, parallel, book,
 * charge, slow, fail; otherwise "I have seen N messages."), served by
 * `serveRunners`. Model calls and tool runs go to the run log in the
 * matrix's JSON-lines format; gate files hold the `model` and `charge`
 * calls. "forecast CITY" hands off to a forecaster agent (matrix_app.ts). Prints
 * `listening <address>` once up.
 *
 * @module
 */

import { matrixReply, matrixSidecarArgs, serveMatrixRunner } from "@dex-agents/core/testing";
import { matrixRunner } from "./matrix_app.js";

const sidecar = matrixSidecarArgs();
await serveMatrixRunner(sidecar, matrixRunner((call) => matrixReply(sidecar, call), sidecar.runLog));
