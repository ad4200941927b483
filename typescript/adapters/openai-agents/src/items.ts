/**
 * Stored messages: each `frameworkItem` is one SDK input item
 * (`AgentInputItem`) as JSON, which the next turn hands the SDK unchanged.
 * The SDK emits one item per tool call and per tool result, so the calls of
 * one response are several stored messages.
 *
 * @module
 */

import type { AgentInputItem } from "@openai/agents";
import { MessageRole } from "@dex-agents/contracts";
import { frameworkMessage, type FrameworkMessage } from "@dex-agents/core";

export function userItem(text: string): AgentInputItem {
  return { type: "message", role: "user", content: text };
}

export function toolOutputItem(callId: string, toolName: string, text: string): AgentInputItem {
  return { type: "function_call_result", callId, name: toolName, status: "completed", output: { type: "text", text } };
}

function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: unknown }) =>
      (part.type === "input_text" || part.type === "output_text") && typeof part.text === "string" ? part.text : "",
    )
    .join("");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (typeof output === "object" && output !== null && (output as { type?: unknown }).type === "text") {
    return String((output as { text?: unknown }).text ?? "");
  }
  return JSON.stringify(output);
}

export function storedMessage(item: AgentInputItem): FrameworkMessage {
  const frameworkItem = JSON.stringify(item);
  if (item.type === "function_call") {
    return frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem, toolCallId: item.callId, toolName: item.name, toolArguments: item.arguments });
  }
  if (item.type === "function_call_result") {
    return frameworkMessage({ role: MessageRole.TOOL, frameworkItem, toolCallId: item.callId, toolName: item.name, toolOutput: outputText(item.output) });
  }
  if (item.type === "message" || item.type === undefined) {
    const message = item as { role?: string; content?: unknown };
    const text = partsText(message.content);
    if (message.role === "user" || message.role === "system" || message.role === "developer") {
      return frameworkMessage({ role: MessageRole.USER, frameworkItem, text });
    }
    return frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem, text: text === "" ? undefined : text });
  }
  // Reasoning items, hosted tool calls and the rest: replayed, not shown as text.
  return frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem });
}
