/**
 * What a failed MCP request means for the call: the model sees it, or the
 * tool may have run. A tool's own failure, a JSON-RPC refusal and a call that
 * never left the Worker are `ToolExecutionError`s; a request that went out
 * without a result back is `McpToolCallInterruptedError`, which fails the
 * Step attempt so the call's effect decides what follows. The TypeScript SDK
 * reports HTTP failures unmapped (`StreamableHTTPError` with the status), so
 * they are read here as the Python source reads the SDK's -32603 / -32601.
 *
 * @module
 */

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ToolExecutionError } from "../runner.js";
import { McpToolCallInterruptedError } from "./errors.js";

// JSON-RPC codes that do not prove the server refused the call: an internal
// error or unreadable body a gateway can send after the server ran it, an
// invalid request the SDK makes locally, and the SDK's own timeout.
const NO_RESULT_CODES = new Set([-32603, -32700, -32600, -32001]);
const CLOSED = "Connection closed";

/** The call never left the Worker: the tool did not run, and the model may try again. */
export function notSent(server: string, tool: string, error: unknown): ToolExecutionError {
  return new ToolExecutionError(
    `MCP server '${server}' could not be reached, so '${tool}' was not called: ${describe(error)}`,
  );
}

/** Classifies an error raised while `tools/call` (or a task request) was in flight. */
export function interruptedOrFailed(
  server: string,
  tool: string,
  error: unknown,
): ToolExecutionError | McpToolCallInterruptedError {
  if (error instanceof ToolExecutionError || error instanceof McpToolCallInterruptedError) return error;
  if (error instanceof McpError) {
    const closed = error.code === -32000 && error.message.includes(CLOSED);
    if (NO_RESULT_CODES.has(error.code) || closed) return new McpToolCallInterruptedError(server, tool, describe(error));
    return new ToolExecutionError(`MCP server '${server}' refused '${tool}' (JSON-RPC ${error.code}): ${error.message}`);
  }
  // A bare 404 is "method not found" (-32601): the server refused. Any other
  // status, and a wrong Content-Type (-1), may come after the call ran.
  if (error instanceof StreamableHTTPError && error.code === 404) {
    return new ToolExecutionError(`MCP server '${server}' refused '${tool}' (HTTP 404): ${error.message}`);
  }
  return new McpToolCallInterruptedError(server, tool, describe(error));
}

/** The model-facing text of a result: its text blocks, else its structured content. */
export function resultText(result: CallToolResult): string {
  const texts = result.content.flatMap((block) => (block.type === "text" ? [block.text] : []));
  if (texts.length > 0) return texts.join("\n");
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return "";
}

/** A tool's own `isError` result, or its text. */
export function settleResult(tool: string, result: CallToolResult): string {
  const text = resultText(result);
  if (result.isError === true) throw new ToolExecutionError(text || `MCP tool '${tool}' failed`);
  return text;
}

export function describe(error: unknown): string {
  if (error instanceof McpError) return `JSON-RPC ${error.code}: ${error.message}`;
  if (error instanceof StreamableHTTPError) return `HTTP ${error.code}: ${error.message}`;
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
    return `${error.name}: ${error.message}${cause}`;
  }
  return String(error);
}
