/**
 * `McpToolSource`: MCP servers' tools as agent tools, each call run in its
 * tool Step on a new connection with the call's idempotency key in `_meta`,
 * as `dex_agents.mcp.McpToolSource` does in Python.
 *
 * @module
 */

import { CallToolResultSchema, CreateTaskResultSchema, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { ToolEffect } from "@dex-agents/contracts";
import { toolEffectFromAnnotations } from "../policies.js";
import {
  ToolExecutionError,
  type AgentTurnContext,
  type DeferredToolCall,
  type DeferredToolExecution,
  type DeferredToolOutcome,
  type ToolExecutionResult,
  type ToolTaskCancellation,
  type ToolTaskPoll,
  type ToolTaskPollOutcome,
} from "../runner.js";
import type { StepwiseTool } from "../stepwise/definition.js";
import { parseToolArguments } from "../tool_values.js";
import type { TaskToolSource } from "../stepwise/sources.js";
import {
  checkServerName,
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_INLINE_TASK_WAIT_MS,
  DEFAULT_TASK_TTL_MS,
  type McpServerConfig,
} from "./config.js";
import { exchange, type Connection } from "./connection.js";
import { decodeReference, encodeReference, qualifiedName, splitQualifiedName, type ToolReference } from "./naming.js";
import { interruptedOrFailed, notSent, settleResult } from "./outcomes.js";
import {
  cancelQuietly,
  decodeCheckpoint,
  decodeStatus,
  encodeCheckpoint,
  encodeStatus,
  inlinePoll,
  nextInterval,
  pollFailure,
  settleTask,
  writeStatusEvent,
} from "./tasks.js";
import { deferredToolCall, isToolResult, toolResult, toolTaskPending, toolTaskStarted } from "../values.js";

/** The `_meta` key of `tools/call` that carries the call's idempotency key. */
export const IDEMPOTENCY_KEY_META = "io.superdurable.dex/idempotencyKey";
const MAX_PAGES = 100;

/** One MCP tool as the agent sees it. */
export interface McpTool {
  /** `<server>__<tool>`, the name the model calls. */
  readonly name: string;
  readonly server: string;
  /** The tool's name on its server. */
  readonly mcpName: string;
  readonly description: string;
  /** The tool's input JSON Schema. */
  readonly parameters: Readonly<Record<string, unknown>>;
  /** The wire annotations (`readOnlyHint`, `idempotentHint`, ...). */
  readonly annotations: Readonly<Record<string, unknown>>;
  /** What the annotations imply; undefined when they say nothing or are not trusted. */
  readonly effect: ToolEffect | undefined;
  /** The `toolSourceReference` a tool Step calls the tool by, without a listing. */
  readonly reference: string;
}

export interface McpToolSourceOptions {
  /** Stdio and Streamable HTTP servers, unique by name; from the Worker's configuration only. */
  readonly servers: readonly McpServerConfig[];
  /** Map readOnlyHint / idempotentHint to effects; false leaves every tool to the session's policies. */
  readonly trustAnnotations?: boolean;
  readonly handshakeTimeoutMs?: number;
  /** How long a request may wait for its result; past it the call counts as interrupted. */
  readonly callTimeoutMs?: number;
  readonly listTimeoutMs?: number;
  /** The TTL a task that `PollToolTask` follows is asked for (24 hours). */
  readonly taskTtlMs?: number;
  /** How long a tool Step follows a task only its own connection can poll (10 minutes). */
  readonly inlineTaskWaitMs?: number;
  /** Where a warning goes (a server left out of the listing, a tool name that collides). */
  readonly warn?: (message: string) => void;
}

type CallOutcome = ToolExecutionResult | { readonly task: Task };

interface CallOptions {
  readonly idempotencyKey: string;
  readonly heartbeat: () => Promise<void>;
  /** The runner polls tasks and the server lets any connection poll them. */
  readonly handOffTasks: boolean;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The tools of the Worker's MCP servers, named `<server>__<tool>`. Tools are
 * listed once per source and cached; every call opens its own connection
 * inside the tool Step. Give it to `AgentDefinition({ toolSources: [...] })`.
 */
export class McpToolSource implements TaskToolSource {
  readonly servers: ReadonlyMap<string, McpServerConfig>;
  readonly trustAnnotations: boolean;
  readonly handshakeTimeoutMs: number;
  readonly callTimeoutMs: number;
  readonly listTimeoutMs: number;
  readonly taskTtlMs: number;
  readonly inlineTaskWaitMs: number;
  readonly #warn: (message: string) => void;
  #tools: Promise<McpTool[]> | undefined;

  constructor(options: McpToolSourceOptions) {
    const servers = new Map<string, McpServerConfig>();
    for (const server of options.servers) {
      checkServerName(server.name);
      if (servers.has(server.name)) throw new TypeError(`MCP server names must be unique; repeated: '${server.name}'`);
      servers.set(server.name, server);
    }
    this.servers = servers;
    this.trustAnnotations = options.trustAnnotations ?? true;
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.listTimeoutMs = options.listTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.taskTtlMs = options.taskTtlMs ?? DEFAULT_TASK_TTL_MS;
    this.inlineTaskWaitMs = options.inlineTaskWaitMs ?? DEFAULT_INLINE_TASK_WAIT_MS;
    this.#warn = options.warn ?? ((message) => console.warn(message));
  }

  // --- listing -----------------------------------------------------------------------

  /**
   * Lists every server once (concurrently) and caches the result. An
   * unlistable server, an unusable tool name and a name already taken (by
   * `taken` or an earlier server) are left out with a warning.
   */
  async listTools(options: { readonly taken?: readonly string[]; readonly refresh?: boolean } = {}): Promise<McpTool[]> {
    if (this.#tools === undefined || options.refresh === true) {
      const taken = options.taken ?? [];
      this.#tools = Promise.all([...this.servers.values()].map((s) => this.#listServer(s))).then((listings) =>
        this.#merge(listings, taken),
      );
    }
    return [...(await this.#tools)];
  }

  /** The cached listing's tool of that name. */
  async tool(name: string): Promise<McpTool | undefined> {
    return (await this.#tools)?.find((t) => t.name === name);
  }

  async #listServer(server: McpServerConfig): Promise<McpTool[] | undefined> {
    const listed = await exchange(
      server,
      async ({ client }) => {
        const tools = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES; page++) {
          const result = await client.listTools(cursor !== undefined ? { cursor } : undefined, { timeout: this.listTimeoutMs });
          tools.push(...result.tools);
          cursor = result.nextCursor;
          if (!cursor) break;
        }
        return tools;
      },
      { handshakeTimeoutMs: this.handshakeTimeoutMs },
    );
    if (!listed.ok) {
      this.#warn(`MCP server '${server.name}' could not be listed, so its tools are left out: ${String(listed.error)}`);
      return undefined;
    }
    const tools: McpTool[] = [];
    for (const tool of listed.value) {
      const name = qualifiedName(server.name, tool.name);
      if (name === undefined) {
        this.#warn(
          `MCP tool '${tool.name}' of server '${server.name}' is left out: the name must match [A-Za-z0-9._-] ` +
            "and `<server>__<tool>` stay within 64 characters",
        );
        continue;
      }
      const annotations = { ...(tool.annotations ?? {}) } as Record<string, unknown>;
      const reference: ToolReference = {
        server: server.name,
        tool: tool.name,
        ...(tool.execution?.taskSupport === "required" ? { task: true } : {}),
      };
      tools.push({
        name,
        server: server.name,
        mcpName: tool.name,
        description: tool.description ?? "",
        parameters: tool.inputSchema as Record<string, unknown>,
        annotations,
        effect: this.trustAnnotations ? toolEffectFromAnnotations(annotations) : undefined,
        reference: encodeReference(reference),
      });
    }
    return tools;
  }

  #merge(listings: readonly (McpTool[] | undefined)[], taken: readonly string[]): McpTool[] {
    const seen = new Set(taken);
    const merged: McpTool[] = [];
    for (const tool of listings.flatMap((l) => l ?? [])) {
      if (seen.has(tool.name)) {
        this.#warn(`MCP tool '${tool.mcpName}' of server '${tool.server}' is left out: an earlier tool has that name`);
        continue;
      }
      seen.add(tool.name);
      merged.push(tool);
    }
    return merged;
  }

  // --- deferral, for an adapter that takes JSON-Schema tools ----------------------------

  /** The call's deferral: the annotation effect as framework effect, under the session's policies. */
  async deferredToolCall(
    turn: AgentTurnContext,
    call: { readonly toolCallId: string; readonly toolName: string; readonly arguments: string },
  ): Promise<DeferredToolCall> {
    const tool = await this.tool(call.toolName);
    if (tool === undefined) throw new RangeError(`'${call.toolName}' is not a listed tool of this MCP source`);
    return deferredToolCall({ ...call, toolSourceReference: tool.reference }, turn.resolveToolPolicy(call.toolName, tool.effect));
  }

  // --- calls -------------------------------------------------------------------------

  /**
   * Sends one `tools/call` on a new connection and returns the result's text;
   * a task is followed to its end inside the call. Call it only in a tool Step.
   * Throws `ToolExecutionError` (the tool failed, the server refused, the call
   * was never sent) or `McpToolCallInterruptedError` (sent, no result back).
   */
  async callTool(
    toolName: string,
    args: Readonly<Record<string, unknown>>,
    options: {
      readonly idempotencyKey: string;
      readonly toolSourceReference?: string | undefined;
      readonly heartbeat?: () => Promise<void>;
      readonly signal?: AbortSignal | undefined;
    },
  ): Promise<string> {
    const outcome = await this.#call(this.#reference(toolName, options.toolSourceReference), args, {
      idempotencyKey: options.idempotencyKey,
      heartbeat: options.heartbeat ?? (async () => {}),
      handOffTasks: false,
      signal: options.signal,
    });
    if (!isToolResult(outcome)) throw new Error("a task handle reached callTool"); // handOffTasks excludes it
    return outcome.output;
  }

  /**
   * A tool Step's call. A stateless HTTP server's task, with a runner that
   * polls tasks, is saved as the attempt's heartbeat checkpoint first and
   * returned as `task_started`; a retried attempt finds the checkpoint and
   * returns the same task without calling again.
   */
  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const record = call.toolCall;
    const reference = this.#reference(record.toolName, record.toolSourceReference);
    const server = this.#server(reference);
    const pollable = server.kind === "http" && call.supportsToolTasks;
    const checkpoint = decodeCheckpoint(call.heartbeatCheckpoint);
    if (pollable && checkpoint !== undefined && checkpoint.server === server.name) {
      return toolTaskStarted(checkpoint.taskId, checkpoint.interval);
    }
    const args = parseToolArguments(record.arguments);
    await call.heartbeat();
    const outcome = await this.#call(reference, args, {
      idempotencyKey: call.idempotencyKey,
      heartbeat: () => call.heartbeat(),
      handOffTasks: pollable,
      signal: call.cancellationSignal,
    });
    if (isToolResult(outcome)) return outcome;
    const interval = nextInterval(outcome.task.pollInterval, undefined);
    await call.saveHeartbeatCheckpoint(encodeCheckpoint({ server: server.name, taskId: outcome.task.taskId, interval }));
    return toolTaskStarted(outcome.task.taskId, interval);
  }

  /**
   * One `tasks/get` of a started task (`pollToolTask`); a completed task's
   * result comes with `tasks/result`. Writes `mcp.task_status` when the status
   * changed. A task the server no longer knows, or a poll that fails, fails
   * the Step attempt, so three failed polls record the call by effect.
   */
  async pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    const record = poll.toolCall;
    const reference = this.#reference(record.toolName, record.toolSourceReference);
    const taskId = record.taskId ?? "";
    const previous = decodeStatus(record.inputContinuation);
    const polled = await exchange(
      this.#server(reference),
      async ({ client }): Promise<ToolTaskPollOutcome> => {
        const task = await client.experimental.tasks.getTask(taskId, { timeout: this.callTimeoutMs });
        writeStatusEvent(poll.events, task, previous);
        const output = await settleTask(client, reference.server, reference.tool, task, this.callTimeoutMs);
        if (output !== undefined) return toolResult(output);
        return toolTaskPending(nextInterval(task.pollInterval, record.taskPollIntervalSeconds), encodeStatus(task.status));
      },
      { handshakeTimeoutMs: this.handshakeTimeoutMs, signal: poll.cancellationSignal },
    );
    if (polled.ok) return polled.value;
    if (polled.error instanceof ToolExecutionError) throw polled.error;
    throw pollFailure(reference.server, reference.tool, polled.error);
  }

  /** Sends `tasks/cancel` for a task that cancel_turn abandoned; any answer, or none, is done. */
  async cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    const record = cancellation.toolCall;
    if (!record.taskId) return;
    const taskId = record.taskId;
    const reference = this.#reference(record.toolName, record.toolSourceReference);
    await exchange(this.#server(reference), ({ client }) => cancelQuietly(client, taskId, this.callTimeoutMs), {
      handshakeTimeoutMs: this.handshakeTimeoutMs,
    });
  }

  async #call(reference: ToolReference, args: Readonly<Record<string, unknown>>, options: CallOptions): Promise<CallOutcome> {
    const server = this.#server(reference);
    const params = { name: reference.tool, arguments: { ...args }, _meta: { [IDEMPOTENCY_KEY_META]: options.idempotencyKey } };
    const send = async ({ client, stateless }: Connection): Promise<CallOutcome> => {
      const request = { timeout: this.callTimeoutMs, signal: options.signal };
      if (reference.task !== true) {
        // A raw request: `callTool` would check output schemas this fresh connection never listed.
        const result = await client.request({ method: "tools/call", params }, CallToolResultSchema, request);
        return toolResult(settleResult(reference.tool, result));
      }
      const handOff = options.handOffTasks && stateless;
      const ttl = handOff ? this.taskTtlMs : 4 * this.inlineTaskWaitMs;
      const created = await client.request({ method: "tools/call", params }, CreateTaskResultSchema, { ...request, task: { ttl } });
      if (handOff) return { task: created.task };
      const output = await inlinePoll(client, {
        server: server.name,
        tool: reference.tool,
        task: created.task,
        heartbeat: options.heartbeat,
        waitMs: this.inlineTaskWaitMs,
        timeoutMs: this.callTimeoutMs,
        signal: options.signal,
      });
      return toolResult(output);
    };
    const sent = await exchange(server, send, { handshakeTimeoutMs: this.handshakeTimeoutMs, signal: options.signal });
    if (sent.ok) return sent.value;
    if (sent.phase === "connect") throw notSent(server.name, reference.tool, sent.error);
    throw interruptedOrFailed(server.name, reference.tool, sent.error);
  }

  // --- Stepwise (`AgentDefinition({ toolSources })`) -----------------------------------

  async stepwiseTools(taken: readonly string[]): Promise<readonly StepwiseTool[]> {
    return (await this.listTools({ taken })).map((tool) =>
      this.#stepwiseTool(tool.name, tool.reference, tool.description, tool.parameters, tool.effect),
    );
  }

  /** The tool a call record names, rebuilt from its reference; only a server of this source qualifies. */
  stepwiseTool(toolName: string, toolSourceReference: string): StepwiseTool | undefined {
    if (!this.owns(toolSourceReference)) return undefined;
    return this.#stepwiseTool(toolName, toolSourceReference, "", { type: "object" }, undefined);
  }

  /** Whether a call record's reference names a server of this source. */
  owns(toolSourceReference: string): boolean {
    const reference = decodeReference(toolSourceReference);
    return reference !== undefined && this.servers.has(reference.server);
  }

  #stepwiseTool(
    name: string,
    reference: string,
    description: string,
    parameters: Readonly<Record<string, unknown>>,
    effect: ToolEffect | undefined,
  ): StepwiseTool {
    return {
      name,
      description,
      parameters,
      ...(effect !== undefined ? { effect } : {}),
      sourceReference: reference,
      execute: (args, call) =>
        this.callTool(name, args, {
          idempotencyKey: call.idempotencyKey,
          toolSourceReference: call.toolCall.toolSourceReference ?? reference,
          heartbeat: () => call.heartbeat(),
          signal: call.cancellationSignal,
        }),
    };
  }

  #server(reference: ToolReference): McpServerConfig {
    const server = this.servers.get(reference.server);
    // Only the Worker's own configuration names servers.
    if (server === undefined) throw new ToolExecutionError(`MCP server '${reference.server}' is not configured on this Worker`);
    return server;
  }

  #reference(toolName: string, toolSourceReference: string | undefined): ToolReference {
    const reference =
      (toolSourceReference ? decodeReference(toolSourceReference) : undefined) ?? splitQualifiedName(toolName);
    if (reference === undefined) throw new ToolExecutionError(`'${toolName}' names no MCP server tool`);
    return reference;
  }
}
