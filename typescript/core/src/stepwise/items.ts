/**
 * The Stepwise transcript: items stored one per message, as compact JSON in
 * `frameworkItem`, the same shapes as the Python Stepwise loop's items so a
 * session's messages read the same from either side. A model response is an
 * `assistant` item followed by one `tool_call` item per call, so a stored
 * message carries at most one tool call; a request joins them again.
 *
 * @module
 */

import { MessageRole, type AgentMessage } from "@dex-agents/contracts";
import type { FrameworkMessage } from "../runner.js";
import type { ModelMessage, ModelToolCall } from "./model.js";
import { RunStateError } from "../errors.js";
import { frameworkMessage } from "../values.js";

export type Item =
  | { readonly type: "user"; readonly text: string }
  | { readonly type: "assistant"; readonly text: string | null; readonly reasoning?: string }
  | { readonly type: "tool_call"; readonly tool_call_id: string; readonly tool_name: string; readonly arguments: string }
  | { readonly type: "tool_result"; readonly tool_call_id: string; readonly tool_name: string; readonly output: string };

/** A run state or stored item that is not a Stepwise one. */
export { RunStateError };

function str(value: Record<string, unknown>, key: string, optional = false): string | null {
  const field = value[key];
  if (typeof field === "string" || (optional && (field === null || field === undefined))) return (field ?? null) as string | null;
  throw new RunStateError(`Stepwise item ${JSON.stringify(value["type"])}: ${JSON.stringify(key)} must be a string`);
}

export function itemFromJson(value: unknown): Item {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new RunStateError(`a Stepwise item must be a JSON object, not ${JSON.stringify(value)}`);
  }
  const v = value as Record<string, unknown>;
  switch (v["type"]) {
    case "user":
      return { type: "user", text: str(v, "text") as string };
    case "assistant": {
      const reasoning = str(v, "reasoning", true);
      return { type: "assistant", text: str(v, "text", true), ...(reasoning !== null ? { reasoning } : {}) };
    }
    case "tool_call":
      return {
        type: "tool_call",
        tool_call_id: str(v, "tool_call_id") as string,
        tool_name: str(v, "tool_name") as string,
        arguments: str(v, "arguments") as string,
      };
    case "tool_result":
      return {
        type: "tool_result",
        tool_call_id: str(v, "tool_call_id") as string,
        tool_name: str(v, "tool_name") as string,
        output: str(v, "output") as string,
      };
    default:
      throw new RunStateError(`unknown Stepwise item type ${JSON.stringify(v["type"])}`);
  }
}

/** The stored message of one item, with its display fields filled. */
export function itemToMessage(item: Item): FrameworkMessage {
  const frameworkItem = JSON.stringify(item);
  switch (item.type) {
    case "user":
      return frameworkMessage({ role: MessageRole.USER, frameworkItem, text: item.text });
    case "assistant":
      return frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem, text: item.text ?? undefined });
    case "tool_call":
      return frameworkMessage({
        role: MessageRole.ASSISTANT,
        frameworkItem,
        toolCallId: item.tool_call_id,
        toolName: item.tool_name,
        toolArguments: item.arguments,
      });
    case "tool_result":
      return frameworkMessage({ role: MessageRole.TOOL, frameworkItem, toolCallId: item.tool_call_id, toolName: item.tool_name, toolOutput: item.output });
  }
}

/**
 * The item a stored message replays as; another runner's message replays
 * from its display fields, so a session can switch to Stepwise.
 */
export function itemFromMessage(message: AgentMessage): Item {
  try {
    return itemFromJson(JSON.parse(message.frameworkItem));
  } catch {
    // not a Stepwise item: fall through to the display fields
  }
  if (message.role === MessageRole.TOOL) {
    return {
      type: "tool_result",
      tool_call_id: message.toolCallId ?? "",
      tool_name: message.toolName ?? "",
      output: message.toolOutput ?? "",
    };
  }
  if (message.role === MessageRole.ASSISTANT) {
    if (message.toolCallId) {
      return {
        type: "tool_call",
        tool_call_id: message.toolCallId,
        tool_name: message.toolName ?? "",
        arguments: message.toolArguments ?? "{}",
      };
    }
    return { type: "assistant", text: message.text ?? null };
  }
  return { type: "user", text: message.text ?? "" };
}

/** Joins each response's assistant and tool-call items into one assistant message. */
export function itemsToModelMessages(items: Iterable<Item>): ModelMessage[] {
  const out: ModelMessage[] = [];
  let open: { text?: string | undefined; reasoning?: string | undefined; calls: ModelToolCall[] } | undefined;
  const close = (): void => {
    if (open !== undefined) {
      out.push({ role: "assistant", text: open.text, reasoning: open.reasoning, toolCalls: open.calls });
    }
    open = undefined;
  };
  for (const item of items) {
    if (item.type === "assistant") {
      close();
      open = { text: item.text ?? undefined, reasoning: item.reasoning, calls: [] };
    } else if (item.type === "tool_call") {
      open ??= { calls: [] };
      open.calls.push({ toolCallId: item.tool_call_id, toolName: item.tool_name, arguments: item.arguments });
    } else if (item.type === "user") {
      close();
      out.push({ role: "user", text: item.text });
    } else {
      close();
      out.push({ role: "tool", toolCallId: item.tool_call_id, toolName: item.tool_name, output: item.output });
    }
  }
  close();
  return out;
}
