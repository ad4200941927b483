/**
 * `node dist/testing/conformance_sidecar.js --address HOST:PORT --log PATH
 * --flow-type T`: the conformance app (conformance_app.ts) on the data file's
 * script, served by `serveRunners` for the Python conformance runner
 * (python/conformance). Prints `listening <address>` once up.
 *
 * @module
 */

import { conformanceSidecarArgs, serveConformanceRunner } from "@dex-agents/core/testing";
import { conformanceRunner } from "./conformance_app.js";

const sidecar = conformanceSidecarArgs();
const structured = sidecar.factory === "build_structured_flow";
await serveConformanceRunner(sidecar, conformanceRunner(sidecar.script, undefined, { structured }));
