/**
 * `node dist/testing/mcp_server.js --log PATH stdio` or `... http [--port N]
 * [--stateful]`: a real MCP server of the official TypeScript SDK for the MCP
 * source's tests. Every tool call appends one JSON line to `--log` (tool,
 * arguments, the idempotency key from `_meta`, the pid) before it does
 * anything else. Over HTTP it prints `listening <url>` once up; stateless by
 * default (any connection polls any task), `--stateful` binds each task to its
 * protocol session, as the SDK's task store does.
 *
 * Tools: `lookup` (readOnlyHint), `set_flag` (idempotentHint), `broken`
 * (answers isError), `job` (idempotentHint, taskSupport required: a task that completes after
 * `ms` milliseconds, or never for `ms` < 0).
 *
 * @module
 */

import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { z } from "zod";

const IDEMPOTENCY_KEY = "io.superdurable.dex/idempotencyKey";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { log: { type: "string" }, port: { type: "string", default: "0" }, stateful: { type: "boolean", default: false } },
});
const logPath = values.log;
if (logPath === undefined || (positionals[0] !== "stdio" && positionals[0] !== "http")) {
  throw new Error("usage: mcp_server.js --log PATH stdio|http [--port N] [--stateful]");
}

function log(tool: string, args: Record<string, unknown>, meta: Record<string, unknown> | undefined): void {
  const key = meta?.[IDEMPOTENCY_KEY];
  appendFileSync(logPath as string, JSON.stringify({ tool, arguments: args, key: key ?? null, pid: process.pid }) + "\n");
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
// One store for the process: a stateless server's task outlives the request that made it.
const taskStore = new InMemoryTaskStore();

function build(): McpServer {
  const server = new McpServer(
    { name: "dex-test-mcp", version: "1.0.0" },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore, taskMessageQueue: new InMemoryTaskMessageQueue() },
  );
  server.registerTool(
    "lookup",
    { description: "Looks up the weather of a city.", inputSchema: { city: z.string() }, annotations: { readOnlyHint: true } },
    async ({ city }, extra) => {
      log("lookup", { city }, extra._meta);
      return text(`sunny in ${city}`);
    },
  );
  server.registerTool(
    "set_flag",
    { description: "Sets a flag.", inputSchema: { name: z.string() }, annotations: { idempotentHint: true, destructiveHint: true } },
    async ({ name }, extra) => {
      log("set_flag", { name }, extra._meta);
      return text(`flag ${name} set`);
    },
  );
  server.registerTool("broken", { description: "Always fails.", inputSchema: {} }, async (_args, extra) => {
    log("broken", {}, extra._meta);
    return { ...text("the service is down"), isError: true };
  });
  server.experimental.tasks.registerToolTask(
    "job",
    { description: "A long job that runs as a task.", inputSchema: { ms: z.number() }, annotations: { idempotentHint: true } },
    {
      async createTask({ ms }, extra) {
        log("job", { ms }, extra._meta);
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval: 200 });
        if (ms >= 0) {
          setTimeout(() => {
            void extra.taskStore.storeTaskResult(task.taskId, "completed", text(`job done after ${ms} ms`)).catch(() => {});
          }, ms);
        }
        return { task };
      },
      getTask: async (_args, extra) => await extra.taskStore.getTask(extra.taskId),
      getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as ReturnType<typeof text>,
    },
  );
  return server;
}

if (positionals[0] === "stdio") {
  await build().connect(new StdioServerTransport());
} else {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (transport === undefined) {
        if (values.stateful && typeof id === "string") {
          res.writeHead(404).end();
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: values.stateful ? () => randomUUID() : undefined,
          enableJsonResponse: true,
          onsessioninitialized: (sid) => void sessions.set(sid, transport as StreamableHTTPServerTransport),
          onsessionclosed: (sid) => void sessions.delete(sid),
        });
        await build().connect(transport);
      }
      await transport.handleRequest(req, res);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  http.listen(Number(values.port), "127.0.0.1", () => {
    const address = http.address();
    const port = typeof address === "object" && address !== null ? address.port : 0;
    process.stdout.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
  process.on("SIGTERM", () => http.close(() => process.exit(0)));
}
