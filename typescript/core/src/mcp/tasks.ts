/**
 * Following an MCP task (the SDK's 2025-11-25 tasks, for tools whose
 * `execution.taskSupport` is `required`): start it with a task-augmented
 * `tools/call`, read it with `tasks/get`, fetch its result with
 * `tasks/result`, end it with `tasks/cancel`.
 *
 * A stateless HTTP server's task can be polled from any connection, so it
 * becomes `ToolTaskStarted` and `PollToolTask` Steps poll it. A stdio
 * server's task dies with its process, and a stateful server's is bound by
 * the SDK's task store to the protocol session the request ends, so those are
 * polled inside the tool Step on the call's own connection, with a heartbeat
 * per poll, for a bounded wait; so is every task of a runner that does not
 * poll tasks.
 *
 * @module
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, McpError, type Task } from "@modelcontextprotocol/sdk/types.js";
import { ToolExecutionError, type EventWriter } from "../runner.js";
import { McpToolCallInterruptedError } from "./errors.js";
import { describe, settleResult } from "./outcomes.js";

/** The event a poll writes when the task's status changed. */
export const TASK_STATUS_EVENT = "mcp.task_status";
const MAX_INTERVAL_SECONDS = 60;
const CHECKPOINT_KIND = "dex_agents.mcp/task";
const UNKNOWN_TASK = -32602;

/**
 * The design's poll interval: the server's, rounded up to whole seconds, or,
 * when that is shorter, double the previous interval, up to a minute.
 */
export function nextInterval(serverMs: number | undefined, previousSeconds: number | undefined): number {
  const server = serverMs ? Math.max(1, Math.ceil(serverMs / 1000)) : 1;
  if (previousSeconds === undefined || previousSeconds <= 0) return Math.min(server, MAX_INTERVAL_SECONDS);
  const doubled = Math.min(Math.trunc(previousSeconds) * 2, MAX_INTERVAL_SECONDS);
  return Math.min(Math.max(server, doubled), 24 * 3600);
}

/** The heartbeat checkpoint of an attempt that started a task: a retry returns it instead of calling again. */
export interface TaskCheckpoint {
  readonly server: string;
  readonly taskId: string;
  readonly interval: number;
}

export function encodeCheckpoint(checkpoint: TaskCheckpoint): string {
  return JSON.stringify({ kind: CHECKPOINT_KIND, server: checkpoint.server, task: checkpoint.taskId, i: checkpoint.interval });
}

/** The checkpoint, or undefined for none or another writer's (each source reads only its own). */
export function decodeCheckpoint(text: string | undefined): TaskCheckpoint | undefined {
  if (!text) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { kind, server, task, i } = value as Record<string, unknown>;
  if (kind !== CHECKPOINT_KIND || typeof server !== "string" || typeof task !== "string" || !Number.isInteger(i)) {
    return undefined;
  }
  return { server, taskId: task, interval: i as number };
}

/** The status the last poll saw, kept as the call's continuation so only a change writes an event. */
export function encodeStatus(status: string): string {
  return JSON.stringify({ status });
}

export function decodeStatus(continuation: string | undefined): string | undefined {
  if (!continuation) return undefined;
  try {
    const value: unknown = JSON.parse(continuation);
    const status = typeof value === "object" && value !== null ? (value as Record<string, unknown>)["status"] : undefined;
    return typeof status === "string" ? status : undefined;
  } catch {
    return undefined;
  }
}

export function writeStatusEvent(events: EventWriter, task: Task, previous: string | undefined): void {
  if (task.status === previous) return;
  events.writeRaw(
    TASK_STATUS_EVENT,
    JSON.stringify({ task_id: task.taskId, status: task.status, message: task.statusMessage ?? null }),
  );
}

/**
 * A terminal task's output text, or undefined while it runs.
 *
 * Throws `ToolExecutionError` for a failed task, a tool's `isError` result
 * and input the session cannot give (2025-11-25 input requests must be
 * answered on a live connection); `McpToolCallInterruptedError` for a
 * cancelled task, since a cancel is eventually consistent.
 */
export async function settleTask(client: Client, server: string, tool: string, task: Task, timeoutMs: number): Promise<string | undefined> {
  switch (task.status) {
    case "completed": {
      const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: timeoutMs });
      return settleResult(tool, result);
    }
    case "failed":
      throw new ToolExecutionError(`MCP task of '${tool}' failed: ${task.statusMessage ?? "no reason given"}`);
    case "cancelled":
      throw new McpToolCallInterruptedError(server, tool, `task '${task.taskId}' was cancelled`);
    case "input_required":
      await cancelQuietly(client, task.taskId, timeoutMs);
      throw new ToolExecutionError(
        `MCP tool '${tool}' asked for input the session cannot give (task '${task.taskId}'): ${task.statusMessage ?? "input_required"}`,
      );
    default:
      return undefined;
  }
}

/** Polls the task on the call's own connection until it ends or the wait runs out. */
export async function inlinePoll(
  client: Client,
  options: {
    readonly server: string;
    readonly tool: string;
    readonly task: Task;
    readonly heartbeat: () => Promise<void>;
    readonly waitMs: number;
    readonly timeoutMs: number;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<string> {
  const { server, tool } = options;
  const deadline = Date.now() + options.waitMs;
  let task = options.task;
  for (;;) {
    const done = await settleTask(client, server, tool, task, options.timeoutMs);
    if (done !== undefined) return done;
    // In-process waits follow the server's interval in milliseconds, not whole-second Steps.
    const interval = Math.max(50, task.pollInterval ?? 1000);
    if (Date.now() + interval > deadline) {
      await cancelQuietly(client, task.taskId, options.timeoutMs);
      throw new McpToolCallInterruptedError(server, tool, `task '${task.taskId}' did not end within ${options.waitMs} ms`);
    }
    await sleep(interval, options.signal);
    await options.heartbeat();
    try {
      task = await client.experimental.tasks.getTask(task.taskId, { timeout: options.timeoutMs });
    } catch (error) {
      throw new McpToolCallInterruptedError(server, tool, `tasks/get failed: ${describe(error)}`);
    }
  }
}

/** Every poll failure is a Step failure: three failed polls go to the call's route by effect. */
export function pollFailure(server: string, tool: string, error: unknown): Error {
  if (error instanceof ToolExecutionError || error instanceof McpToolCallInterruptedError) return error;
  if (error instanceof McpError && error.code === UNKNOWN_TASK) {
    return new McpToolCallInterruptedError(server, tool, `the server no longer knows the task: ${error.message}`);
  }
  return new McpToolCallInterruptedError(server, tool, `tasks/get failed: ${describe(error)}`);
}

export async function cancelQuietly(client: Client, taskId: string, timeoutMs: number): Promise<void> {
  try {
    await client.experimental.tasks.cancelTask(taskId, { timeout: timeoutMs });
  } catch {
    // Best-effort: any answer, or none, is done.
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
