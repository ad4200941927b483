/**
 * `@dex-agents/mastra`: a Mastra `Agent` (@mastra/core 1.71) as a dex-agents
 * runner on the TypeScript Stepwise loop.
 *
 * @module
 */

export { aiSdkMessages, type AiSdkMessage } from "./messages.js";
export { AgentOwnedToolsError, MastraModelClient, type MastraAgent } from "./model.js";
export { mastraStructuredOutput, SCHEMA_VALIDATION_FAILED, type MastraOutput } from "./output.js";
export { MastraMemoryError, MastraRunner, type MastraRunnerOptions } from "./runner.js";
export { dexToolCall, mastraTool, type MastraTool, type MastraToolPolicy } from "./tools.js";
