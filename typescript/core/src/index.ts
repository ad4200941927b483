/**
 * `@dex-agents/core`: durable agent sessions for TypeScript runners.
 *
 * The session Flow runs in the Python Worker (`dex_agents`); a TypeScript
 * runner is served to it by `serveRunners` over the runner service
 * (runner.proto), and `launchWorker` starts that Worker for the served Flow
 * types, so a TypeScript application runs one command.
 *
 * @module
 */

export * from "./runner.js";
export { RunStateError, TurnFailed } from "./errors.js";
export { dexRunInfo, runInfoOfToolStep, storedResult, withRunInfo, withStoredResults, type DexRunInfo } from "./run_info.js";
export { frameworkVersion, RunStateFormat, type LegacyRunStateReader, type RunStateFormatOptions } from "./run_state.js";
export { parseToolArguments, toolOutputText } from "./tool_values.js";
export {
  contextSummary,
  deferredToolCall,
  policyOf,
  frameworkMessage,
  isToolCallsRequested,
  isToolInputRequested,
  isToolResult,
  isToolTaskPending,
  isToolTaskStarted,
  isTurnCompleted,
  isTurnContinued,
  modelUsage,
  toolCallsRequested,
  toolInputRequested,
  toolResult,
  toolTaskPending,
  toolTaskStarted,
  turnCompleted,
  turnContinued,
  type ModelCallMetadataInit,
  type UsageCounts,
} from "./values.js";
export {
  InvalidToolCallIdError,
  toolCallIdProblem,
  ToolRouter,
  type RoutedCall,
  type ToolRouterOptions,
} from "./routing.js";
export {
  CAPABILITIES,
  declareCapabilities,
  describeRunner,
  impliedCapabilities,
  supports,
  type Capability,
} from "./capabilities.js";
export type { RunnerCapabilities } from "@dex-agents/contracts";
export { DEFAULT_REQUIRES_APPROVAL, resolveToolPolicy, toolEffectFromAnnotations } from "./policies.js";
export {
  isFinal,
  modelVisibleResult,
  NO_RESULT_TEXT,
  OUTCOME_UNKNOWN_RESULT,
  resultText,
  turnFailureNote,
  USER_REJECTED_RESULT,
} from "./results.js";
export {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  serveRunners,
  UnknownFlowTypeError,
  type RunnerServer,
  type ServeRunnersOptions,
} from "./serve.js";
export { wireSessionOptions, type CompactionOptions, type SessionOptions } from "./session_options.js";
export { launchWorker, WorkerStartError, type LaunchedWorker, type LaunchWorkerOptions } from "./launcher.js";
export * from "./stepwise/index.js";
