/**
 * `@dex-agents/core/mcp`: the tools of a Worker's MCP servers as durable
 * Stepwise tools. It needs the optional peer dependency
 * `@modelcontextprotocol/sdk`; the main entry point never loads it.
 *
 * ```ts
 * import { AgentDefinition, StepwiseRunner } from "@dex-agents/core";
 * import { McpToolSource } from "@dex-agents/core/mcp";
 *
 * const source = new McpToolSource({
 *   servers: [
 *     { kind: "stdio", name: "files", command: "files-mcp", args: ["--root", "/srv"] },
 *     { kind: "http", name: "crm", url: "http://crm.internal/mcp" },
 *   ],
 * });
 * const runner = new StepwiseRunner(new AgentDefinition({ model, toolSources: [source] })); // tools `files__read`, ...
 * ```
 *
 * Every call runs in its own tool Step on a new connection, with the call's
 * idempotency key in `_meta["io.superdurable.dex/idempotencyKey"]`. A
 * `taskSupport: required` tool runs as a task: a stateless HTTP server's task
 * is polled by `PollToolTask` Steps, any other inside its tool Step.
 *
 * @module
 */

export {
  checkServerName,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_INLINE_TASK_WAIT_MS,
  DEFAULT_TASK_TTL_MS,
  type McpHttpServer,
  type McpServerConfig,
  type McpStdioServer,
} from "./config.js";
export { McpToolCallInterruptedError } from "./errors.js";
export { MAX_TOOL_NAME_LENGTH, splitQualifiedName } from "./naming.js";
export { IDEMPOTENCY_KEY_META, McpToolSource, type McpTool, type McpToolSourceOptions } from "./source.js";
export { TASK_STATUS_EVENT } from "./tasks.js";
