/**
 * `@dex-agents/claude-agent-sdk`: the Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`
 * 0.3) as a dex-agents whole-turn harness.
 *
 * @module
 */

export {
  CONTINUE_PROMPT,
  ClaudeAgentRunner,
  DEFAULT_MAX_TURNS,
  deniedText,
  maxTurnsError,
  sessionUuid,
  type ClaudeAgentRunnerOptions,
} from "./runner.js";
export { currentToolExecution, fullToolName } from "./tools.js";
