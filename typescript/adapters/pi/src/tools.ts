/**
 * Pi tools (`AgentTool`, TypeBox schemas) as Stepwise tools. The model sees
 * the tool's TypeBox schema as its JSON schema; the session runs `execute`
 * in the call's tool Step, after pi-ai's own argument validation.
 *
 * @module
 */

import type { ToolEffect } from "@dex-agents/contracts";
import { ToolExecutionError, type DeferredToolExecution, type StepwiseTool } from "@dex-agents/core";
import type { AgentTool, AgentToolResult } from "@mariozechner/pi-agent-core";
import { validateToolArguments } from "@mariozechner/pi-ai";

/** What a Pi tool does to the world; the session's `toolPolicies` win over it. */
export interface PiToolPolicy {
  readonly effect: ToolEffect;
  readonly requiresApproval?: boolean;
}

/** The model-visible text of a tool result: its text parts, images named by type. */
export function resultText(result: AgentToolResult<unknown>): string {
  return result.content.map((c) => (c.type === "text" ? c.text : `[image ${c.mimeType}]`)).join("\n");
}

/**
 * One Pi tool as a Stepwise tool. Pi's rule "throw on failure" maps to a
 * `ToolExecutionError`: the model sees the message and the call is not retried.
 */
export function piTool(tool: AgentTool<any>, policy?: PiToolPolicy): StepwiseTool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Readonly<Record<string, unknown>>,
    ...(policy !== undefined ? { effect: policy.effect } : {}),
    ...(policy?.requiresApproval !== undefined ? { requiresApproval: policy.requiresApproval } : {}),
    async execute(args: Record<string, unknown>, call: DeferredToolExecution): Promise<string> {
      const id = call.toolCall.toolCallId;
      let params: unknown;
      try {
        const raw = tool.prepareArguments !== undefined ? tool.prepareArguments(args) : args;
        params = validateToolArguments(tool, { type: "toolCall", id, name: tool.name, arguments: raw as Record<string, unknown> });
      } catch (error) {
        throw new ToolExecutionError(error instanceof Error ? error.message : String(error));
      }
      let result: AgentToolResult<unknown>;
      try {
        result = await tool.execute(id, params, call.cancellationSignal, (partial) =>
          call.events.writeRaw("pi.tool_update", JSON.stringify({ tool_call_id: id, text: resultText(partial) })),
        );
      } catch (error) {
        if (error instanceof ToolExecutionError) throw error;
        if (call.cancellationSignal.aborted) throw error;
        throw new ToolExecutionError(error instanceof Error ? error.message : String(error));
      }
      return resultText(result);
    },
  };
}
