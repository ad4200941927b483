/**
 * `@dex-agents/pi`: pi-ai models and Pi tools (pi-agent-core 0.73) as a
 * dex-agents runner on the TypeScript Stepwise loop.
 *
 * @module
 */

export { PiModelClient, piMessages, type PiModelClientOptions } from "./model.js";
export { PiRunner, type PiRunnerOptions } from "./runner.js";
export { piTool, resultText, type PiToolPolicy } from "./tools.js";
