/**
 * `node dist/testing/conformance_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T` (under Node 22, which @mastra/core needs): the conformance app
 * (conformance_app.ts) on the data file's script, served by `serveRunners` for
 * the Python conformance runner (python/conformance) and the run-state recorder.
 * Prints `listening <address>` once up.
 *
 * @module
 */

import { conformanceSidecarArgs, serveConformanceRunner } from "@dex-agents/core/testing";
import { conformanceRunner } from "./conformance_app.js";

const sidecar = conformanceSidecarArgs();
await serveConformanceRunner(sidecar, conformanceRunner(sidecar.script));
