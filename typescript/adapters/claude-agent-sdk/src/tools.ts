/**
 * The tools the runner owns: SDK MCP tools (`tool()` of the Claude Agent SDK)
 * by server name. Each run serves them to the CLI through in-process servers;
 * a deferred call's real body runs in its tool Step instead.
 *
 * @module
 */

import { createSdkMcpServer, type McpSdkServerConfigWithInstance, type SdkMcpToolDefinition } from "@anthropic-ai/claude-agent-sdk";
import { ToolEffect } from "@dex-agents/contracts";
import {
  dexRunInfo,
  parseToolArguments,
  runInfoOfToolStep,
  toolEffectFromAnnotations,
  ToolExecutionError,
  withRunInfo,
  type DeferredToolExecution,
  type DexRunInfo,
  type ToolExecutionResult,
  toolResult,
} from "@dex-agents/core";

/**
 * The kit's `dexRunInfo`, under the name this adapter first exported it as:
 * the tool Step while a tool's handler runs in one, else undefined (an inline
 * read inside the CLI). A handler hands its `idempotencyKey` to the service it calls.
 */
export function currentToolExecution(): DexRunInfo | undefined {
  return dexRunInfo();
}

/** The name the CLI gives an MCP tool, and the name the session records. */
export function fullToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

export interface RunnerTool {
  readonly name: string;
  readonly bareName: string;
  readonly frameworkEffect: ToolEffect | undefined;
  readonly definition: SdkMcpToolDefinition<any>;
}

function text(result: { content?: readonly unknown[] }): string {
  return (result.content ?? [])
    .map((p) => (typeof p === "object" && p !== null && (p as { type?: unknown }).type === "text" ? String((p as { text?: unknown }).text ?? "") : ""))
    .join("");
}

export class ToolTable {
  readonly #servers: ReadonlyMap<string, readonly SdkMcpToolDefinition<any>[]>;
  readonly #tools = new Map<string, RunnerTool>();

  constructor(servers: Readonly<Record<string, readonly SdkMcpToolDefinition<any>[]>>) {
    this.#servers = new Map(Object.entries(servers));
    for (const [server, tools] of this.#servers) {
      for (const definition of tools) {
        const name = fullToolName(server, definition.name);
        if (this.#tools.has(name)) throw new Error(`tool ${JSON.stringify(name)} is declared twice`);
        this.#tools.set(name, { name, bareName: definition.name, frameworkEffect: toolEffectFromAnnotations(definition.annotations), definition });
      }
    }
  }

  get(name: string): RunnerTool | undefined {
    return this.#tools.get(name);
  }

  serverNames(): string[] {
    return [...this.#servers.keys()];
  }

  /** Fresh in-process servers for one run (an MCP server instance connects once). */
  servers(): Record<string, McpSdkServerConfigWithInstance> {
    return Object.fromEntries([...this.#servers].map(([name, tools]) => [name, createSdkMcpServer({ name, tools: [...tools] })]));
  }

  /** Runs one deferred call's real body, in its tool Step. */
  async execute(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    const tool = this.#tools.get(call.toolCall.toolName);
    if (tool === undefined) throw new ToolExecutionError(`the tool ${JSON.stringify(call.toolCall.toolName)} is not one of this agent's`);
    const input = parseToolArguments(call.toolCall.arguments);
    await call.heartbeat();
    const result = await withRunInfo(runInfoOfToolStep(call), () => tool.definition.handler(input as never, {}));
    if (result.isError === true) throw new ToolExecutionError(text(result));
    return toolResult(text(result));
  }
}
