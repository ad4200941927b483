/**
 * Server configurations: what a Worker is told about its MCP servers. They
 * come from the Worker's own configuration only; nothing a session carries
 * (Flow input, a user message, settings) can name a server.
 *
 * @module
 */

/** Bounds opening a connection: spawn or connect, plus `initialize`. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 30_000;
/** Bounds one request once the connection is open; past it the call is interrupted. */
export const DEFAULT_CALL_TIMEOUT_MS = 300_000;
/** The TTL a pollable task is asked for: its polls span Worker restarts. */
export const DEFAULT_TASK_TTL_MS = 24 * 3600 * 1000;
/** How long a tool Step follows a task only its own connection can poll. */
export const DEFAULT_INLINE_TASK_WAIT_MS = 600_000;

const SERVER_NAME = /^[A-Za-z0-9.-]+(?:_[A-Za-z0-9.-]+)*$/;

/** An MCP server the Worker starts as a child process, one process per request. */
export interface McpStdioServer {
  readonly kind: "stdio";
  /** Prefixes the server's tool names (`<name>__<tool>`). */
  readonly name: string;
  readonly command: string;
  readonly args?: readonly string[];
  /** The child's environment; unset inherits only the SDK's safe default variables. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A Streamable HTTP MCP server; every request is its own protocol session. */
export interface McpHttpServer {
  readonly kind: "http";
  /** Prefixes the server's tool names (`<name>__<tool>`). */
  readonly name: string;
  readonly url: string;
  /** Sent with every request (for example an Authorization header). */
  readonly headers?: Readonly<Record<string, string>>;
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** Server names prefix tool names and are split off on the first `__`, so they may not contain one. */
export function checkServerName(name: string): void {
  if (!SERVER_NAME.test(name) || name.length > 64) {
    throw new TypeError(
      `MCP server name ${JSON.stringify(name)} must be 1 to 64 characters of [A-Za-z0-9._-], ` +
        "without `__` and without a leading or trailing `_`",
    );
  }
}
