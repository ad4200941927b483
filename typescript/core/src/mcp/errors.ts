/**
 * The error of a call that went out without a result coming back.
 *
 * @module
 */

/**
 * A `tools/call` (or a task request) went out and no result came back, so the
 * tool may have run. Deliberately not a `ToolExecutionError`: it fails the
 * tool Step attempt, and the call's effect decides what follows (CallTool
 * sends a new request for read and idempotent_write calls,
 * CallSingleAttemptTool records outcome_unknown).
 */
export class McpToolCallInterruptedError extends Error {
  override name = "McpToolCallInterruptedError";
  constructor(
    readonly server: string,
    readonly tool: string,
    readonly reason: string,
  ) {
    super(`MCP call of '${tool}' on server '${server}' was sent but got no result: ${reason}`);
  }
}
