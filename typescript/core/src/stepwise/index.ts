/**
 * Stepwise: the built-in agent loop of the design document in TypeScript,
 * over a provider-neutral `ModelClient`.
 *
 * @module
 */

export { BUILT_IN_TOOL_POLICY, BUILT_IN_TOOL_SPECS, offeredBuiltIns } from "./built_ins.js";
export {
  approximateTokens,
  DEFAULT_SUMMARY_INSTRUCTIONS,
  SUMMARY_PREFIX,
  type TokenCounter,
} from "./compaction.js";
export {
  MAX_CONSECUTIVE_CONTINUATIONS,
  type TurnContinuation,
  type TurnContinuationContext,
  type TurnContinuationDecision,
  type TurnContinuationHook,
} from "./continuation.js";
export {
  AgentDefinition,
  type AgentDefinitionOptions,
  type InstructionContext,
  type Instructions,
  type StepwiseTool,
} from "./definition.js";
export type { Item } from "./items.js";
export type {
  ModelClient,
  ModelDelta,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ModelToolCall,
  ModelToolChoice,
  ModelUsage,
  ToolSpec,
} from "./model.js";
export { checkStructuredOutput, DEFAULT_OUTPUT_RETRIES, type StructuredOutput } from "./output.js";
export { buildPlanNote } from "./plan.js";
export { STEPWISE_RUN_STATE, stepwiseRunStateFormat } from "./state.js";
export { isTaskToolSource, type StepwiseToolSource, type TaskToolSource } from "./sources.js";
export {
  InvalidModelResponseError,
  parseArgumentsObject,
  STEPWISE_CAPABILITIES,
  stepwiseCapabilitiesWithout,
  StepwiseRunner,
} from "./runner.js";
