/**
 * `@dex-agents/core/testing`: support for the sidecar tests of TypeScript adapters.
 *
 * @module
 */

export { matrixSidecarArgs, serveMatrixRunner, type MatrixSidecarArgs } from "./matrix_sidecar.js";
export { deferredExecution } from "./executions.js";
export { RunLog } from "./runlog.js";
export { storedUserMessage, turnContext, type TurnContextOptions } from "./turns.js";
