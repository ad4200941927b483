/**
 * `@dex-agents/core/testing`: support for the sidecar tests of TypeScript adapters.
 *
 * @module
 */

export {
  aiSdkDoStream,
  aiSdkGenerateResponse,
  aiSdkStreamResponse,
  aiSdkUserPrompts,
  type AiSdkPromptMessage,
} from "./ai_sdk_model.js";
export { capabilitiesDeclaration, checkCapabilitiesFile, WRITE_CAPABILITIES_VARIABLE } from "./capabilities_file.js";
export { plainBenchArgs, timedRuns, type PlainBenchArgs } from "./bench.js";
export { conformanceSidecarArgs, serveConformanceRunner, type ConformanceSidecarArgs } from "./conformance_sidecar.js";
export {
  ConformanceCasesError,
  ConformanceScript,
  type ConformanceData,
  type ConformanceOutput,
  type ConformanceReply,
  type ConformanceTool,
  type ScriptedAnswer,
  type ScriptedModelCall,
  type ScriptedToolCall,
  type ScriptLog,
} from "./conformance.js";
export { deferredExecution } from "./executions.js";
export { RunLog } from "./runlog.js";
export { storedUserMessage, testTurn, type TestTurnOptions } from "./turns.js";
export {
  assertRunStatePointsUnsupported,
  fixtureReply,
  ModelScript,
  normalizedOutcome,
  POINT_CAPABILITIES,
  readRunStateFixture,
  readRunStateFixtures,
  resumeRunStateFixture,
  RUN_STATE_POINTS,
  sha256,
  type NormalizedOutcome,
  type RunStateFixture,
  type RunStatePoint,
} from "./run_state_fixtures.js";
export { noteModelReply, RECORD_TURN_CONTEXT_VARIABLE, recordingRunner, wireTurnContext } from "./run_state_recorder.js";
