/**
 * Mastra tools (`createTool`) as Stepwise tools. The model sees the tool's
 * input schema as JSON schema; the session runs the tool's own `execute`
 * (which validates the input first) in the call's tool Step.
 *
 * @module
 */

import type { ToolEffect } from "@dex-agents/contracts";
import { ToolExecutionError, type DeferredToolExecution, type StepwiseTool } from "@dex-agents/core";
import { standardSchemaToJSONSchema, toStandardSchema } from "@mastra/core/schema";
import { RequestContext } from "@mastra/core/request-context";
import type { ToolAction } from "@mastra/core/tools";

/** A Mastra tool with its `execute`; `any`: each tool types its own input and output. */
export type MastraTool = ToolAction<any, any, any, any, any, any, any>;

/** What a Mastra tool does to the world; the session's `toolPolicies` win over it. */
export interface MastraToolPolicy {
  readonly effect: ToolEffect;
  readonly requiresApproval?: boolean;
}

/** Where a tool's request context holds the Dex tool call it runs for. */
const DEX_TOOL_CALL_KEY = "dex.toolCall";

/**
 * The Dex tool call a Mastra tool's `execute` runs for, from its context:
 * `idempotencyKey` (the same on every attempt) for a write to pass on,
 * `heartbeat` for a long run, `events` for progress. Undefined when the
 * tool runs outside a Dex session.
 */
export function dexToolCall(
  context: { readonly requestContext?: { getRaw(key: string): unknown } | undefined } | undefined,
): DeferredToolExecution | undefined {
  return context?.requestContext?.getRaw(DEX_TOOL_CALL_KEY) as DeferredToolExecution | undefined;
}

const EMPTY_OBJECT_SCHEMA = { type: "object", properties: {} } as const;

function inputJsonSchema(tool: MastraTool): Readonly<Record<string, unknown>> {
  if (tool.inputSchema === undefined) return EMPTY_OBJECT_SCHEMA;
  return standardSchemaToJSONSchema(toStandardSchema(tool.inputSchema)) as Readonly<Record<string, unknown>>;
}

/** Mastra's `execute` returns `{ error: true, message, validationErrors }` for input that fails its schema. */
function isValidationFailure(value: unknown): value is { error: true; message: string } {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v["error"] === true && typeof v["message"] === "string" && "validationErrors" in v;
}

/**
 * One Mastra tool as a Stepwise tool. A throw or a failed validation is a
 * `ToolExecutionError`: the model sees the message and the call is not
 * retried; a throw after cancellation stays what it is.
 */
export function mastraTool(name: string, tool: MastraTool, policy?: MastraToolPolicy): StepwiseTool {
  const execute = tool.execute;
  if (execute === undefined) throw new TypeError(`Mastra tool ${JSON.stringify(name)} has no execute`);
  return {
    name,
    description: tool.description,
    parameters: inputJsonSchema(tool),
    ...(policy !== undefined ? { effect: policy.effect } : {}),
    ...(policy?.requiresApproval !== undefined ? { requiresApproval: policy.requiresApproval } : {}),
    async execute(args: Record<string, unknown>, call: DeferredToolExecution): Promise<unknown> {
      let output: unknown;
      try {
        const requestContext = new RequestContext([[DEX_TOOL_CALL_KEY, call]]);
        output = await execute(args, { abortSignal: call.cancellationSignal, requestContext });
      } catch (error) {
        if (error instanceof ToolExecutionError || call.cancellationSignal.aborted) throw error;
        throw new ToolExecutionError(error instanceof Error ? error.message : String(error));
      }
      if (isValidationFailure(output)) throw new ToolExecutionError(output.message);
      return output;
    },
  };
}
