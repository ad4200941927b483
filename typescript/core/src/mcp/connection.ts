/**
 * One connection per request. Every request opens a new connection (a new
 * child process for stdio, a new protocol session for HTTP), so a server
 * restarted between listing and calling is harmless and nothing spans Steps.
 * Opening is bounded by the handshake timeout; an HTTP protocol session ends
 * with a DELETE (`terminateSession`: the SDK's `close()` omits it).
 *
 * @module
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { McpServerConfig } from "./config.js";

/** The open connection an action runs on. */
export interface Connection {
  readonly client: Client;
  /** An HTTP server that keeps no protocol session: any connection can poll its tasks. */
  readonly stateless: boolean;
}

/** How one request went: its value, or the error and whether it was in flight. */
export type Exchange<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown; readonly phase: "connect" | "request" };

const CLIENT_INFO = { name: "dex-agents", version: "0.1.0" };

/** Runs `action` on a new connection to `server`; never throws. */
export async function exchange<T>(
  server: McpServerConfig,
  action: (connection: Connection) => Promise<T>,
  options: { readonly handshakeTimeoutMs: number; readonly signal?: AbortSignal | undefined },
): Promise<Exchange<T>> {
  const client = new Client(CLIENT_INFO);
  const http =
    server.kind === "http"
      ? new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: { ...(server.headers ?? {}) } },
        })
      : undefined;
  const transport =
    http ??
    new StdioClientTransport({
      command: server.kind === "stdio" ? server.command : "",
      ...(server.kind === "stdio" && server.args !== undefined ? { args: [...server.args] } : {}),
      ...(server.kind === "stdio" && server.env !== undefined ? { env: { ...server.env } } : {}),
      ...(server.kind === "stdio" && server.cwd !== undefined ? { cwd: server.cwd } : {}),
      stderr: "ignore",
    });
  try {
    await client.connect(transport, { timeout: options.handshakeTimeoutMs, signal: options.signal });
  } catch (error) {
    await quietly(() => client.close());
    return { ok: false, error, phase: "connect" };
  }
  try {
    const value = await action({ client, stateless: http !== undefined && http.sessionId === undefined });
    return { ok: true, value };
  } catch (error) {
    return { ok: false, error, phase: "request" };
  } finally {
    if (http?.sessionId !== undefined) await quietly(() => http.terminateSession());
    await quietly(() => client.close());
  }
}

async function quietly(step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch {
    // Closing is best-effort: the request's outcome is already decided.
  }
}
