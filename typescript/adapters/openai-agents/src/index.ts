/**
 * `@dex-agents/openai-agents`: the OpenAI Agents SDK for JavaScript
 * (`@openai/agents` 0.20) as a dex-agents runner.
 *
 * @module
 */

export { dexRunInfo, type DexRunInfo } from "@dex-agents/core";
export { HANDOFF_EVENT, OpenAiAgentsRunner, type OpenAiAgentsRunnerOptions } from "./runner.js";
