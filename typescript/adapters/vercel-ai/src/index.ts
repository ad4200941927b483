/**
 * `@dex-agents/vercel-ai`: the Vercel AI SDK (`ai` 7) as a dex-agents runner.
 *
 * @module
 */

export { VercelAiRunner, type VercelAiRunnerOptions, type VercelAiTool } from "./runner.js";
export type { VercelAiOutput } from "./output.js";
