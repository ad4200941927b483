/**
 * The Stepwise transcript as AI SDK model messages, the input `Agent.stream`
 * takes: an assistant message carries its reasoning, text and tool calls as
 * parts; consecutive tool results join into one `tool` message, as the AI SDK
 * writes them; each result's text goes back as a `text` output.
 *
 * @module
 */

import type { ModelMessage } from "@dex-agents/core";

type AssistantPart =
  | { readonly type: "reasoning"; readonly text: string }
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool-call"; readonly toolCallId: string; readonly toolName: string; readonly input: unknown };

interface ToolResultPart {
  readonly type: "tool-result";
  readonly toolCallId: string;
  readonly toolName: string;
  readonly output: { readonly type: "text"; readonly value: string };
}

export type AiSdkMessage =
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: AssistantPart[] }
  | { readonly role: "tool"; readonly content: ToolResultPart[] };

/** A stored call's arguments; text that is no JSON (another runner's) replays as `{}`. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

export function aiSdkMessages(messages: readonly ModelMessage[]): AiSdkMessage[] {
  const out: AiSdkMessage[] = [];
  for (const m of messages) {
    if (m.role === "user") {
      out.push({ role: "user", content: m.text });
    } else if (m.role === "assistant") {
      const content: AssistantPart[] = [];
      if (m.reasoning) content.push({ type: "reasoning", text: m.reasoning });
      if (m.text) content.push({ type: "text", text: m.text });
      for (const call of m.toolCalls) {
        content.push({ type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: parsedArguments(call.arguments) });
      }
      out.push({ role: "assistant", content });
    } else {
      const part: ToolResultPart = {
        type: "tool-result",
        toolCallId: m.toolCallId,
        toolName: m.toolName,
        output: { type: "text", value: m.output },
      };
      const last = out.at(-1);
      if (last?.role === "tool") last.content.push(part);
      else out.push({ role: "tool", content: [part] });
    }
  }
  return out;
}
