/**
 * Context compaction for Stepwise: size estimates, safe cuts and the summary
 * request. A cut never separates a tool call from its result, nor one model
 * response's items from each other, so the retained messages replay as valid
 * input. Texts are the Python loop's, kept exact.
 *
 * @module
 */

import type { AgentMessage } from "@dex-agents/contracts";
import { itemFromMessage, type Item } from "./items.js";
import type { ModelMessage } from "./model.js";

export const DEFAULT_SUMMARY_INSTRUCTIONS =
  "You summarize conversations between a user and an AI agent so the agent can " +
  "continue without the full history. Keep every fact, decision, open question, " +
  "commitment, and tool result the agent may still need; leave out pleasantries. " +
  "Write plain text.";
const SUMMARY_REQUEST = "Summarize the conversation above for the agent that continues it.";
export const SUMMARY_PREFIX = "[Dex] Summary of the earlier conversation:";

export type TokenCounter = (text: string) => number;

/** About four characters a token: cheap, provider-neutral, and errs high for code. */
export function approximateTokens(text: string): number {
  return Math.floor((text.length + 3) / 4);
}

export function estimateItems(items: readonly Item[], count: TokenCounter): number {
  return items.reduce((sum, item) => sum + count(JSON.stringify(item)), 0);
}

/** Indexes `i` such that cutting after `items[i]` is safe. */
export function cutPoints(items: readonly Item[]): number[] {
  const points: number[] = [];
  const open = new Set<string>();
  items.forEach((item, index) => {
    if (item.type === "tool_call") open.add(item.tool_call_id);
    else if (item.type === "tool_result") open.delete(item.tool_call_id);
    const following = items[index + 1];
    const continuesResponse =
      following?.type === "tool_call" && (item.type === "assistant" || item.type === "tool_call");
    if (open.size === 0 && !continuesResponse) points.push(index);
  });
  return points;
}

/**
 * The last sequence to summarize: the earliest safe cut whose newer messages
 * fit the budget. The newest message always stays; undefined without a safe cut.
 */
export function selectCutoff(
  messages: readonly AgentMessage[],
  retainedTokenBudget: number,
  count: TokenCounter,
): number | undefined {
  if (messages.length < 2) return undefined;
  const items = messages.map(itemFromMessage);
  const sizes = items.map((item) => estimateItems([item], count));
  const candidates = cutPoints(items).filter((i) => i < items.length - 1);
  const sequenceAt = (i: number): number => Number(messages[i]!.sequence);
  for (const index of candidates) {
    if (sizes.slice(index + 1).reduce((a, b) => a + b, 0) <= retainedTokenBudget) return sequenceAt(index);
  }
  const last = candidates.at(-1);
  // Nothing fits the budget: keep as little as a safe cut allows.
  return last === undefined ? undefined : sequenceAt(last);
}

export function leftOutNote(n: number): string {
  return n === 1
    ? "[Dex] 1 earlier message did not fit in this request and is left out."
    : `[Dex] ${n} earlier messages did not fit in this request and are left out.`;
}

/** The transcript as text: the summary call offers no tools. */
function render(item: Item): string {
  switch (item.type) {
    case "user":
      return `User: ${item.text}`;
    case "assistant":
      return `Assistant: ${item.text ?? ""}`;
    case "tool_call":
      return `Assistant called tool ${item.tool_name} (${item.tool_call_id}) with ${item.arguments}`;
    case "tool_result":
      return `Tool result of ${item.tool_name} (${item.tool_call_id}): ${item.output}`;
  }
}

/** The summary request's messages, leaving out the oldest past `budget` tokens. */
export function buildSummaryMessages(options: {
  readonly previousSummary: string | undefined;
  readonly messages: readonly AgentMessage[];
  readonly budget: number;
  readonly count: TokenCounter;
}): ModelMessage[] {
  const { previousSummary, budget, count } = options;
  const items = options.messages.map(itemFromMessage);
  const fixed = [SUMMARY_REQUEST, ...(previousSummary !== undefined ? [`${SUMMARY_PREFIX}\n${previousSummary}`] : [])];
  const fixedTokens = fixed.reduce((s, t) => s + count(t), 0) + count(leftOutNote(items.length));
  const lines = items.map(render);
  const sizes = lines.map((line) => count(line) + 1);
  const sum = (from: number): number => sizes.slice(from).reduce((a, b) => a + b, 0);
  let start = 0;
  if (fixedTokens + sum(0) > budget) {
    const starts = cutPoints(items).map((i) => i + 1).filter((s) => s < items.length);
    const fitting = starts.filter((s) => fixedTokens + sum(s) <= budget);
    start = fitting[0] ?? starts.at(-1) ?? 0;
  }
  const out: ModelMessage[] = [];
  if (previousSummary !== undefined) out.push({ role: "user", text: `${SUMMARY_PREFIX}\n${previousSummary}` });
  if (start) out.push({ role: "user", text: leftOutNote(start) });
  out.push({ role: "user", text: `${lines.slice(start).join("\n")}\n\n${SUMMARY_REQUEST}` });
  return out;
}
