/**
 * The CLI's session transcript as Dex stores it. The transcript is the CLI's
 * own JSONL entries, kept whole: a turn's entries so far ride in
 * `frameworkRunState` while the turn waits for deferred tools, and a finished
 * turn's entries ride in the `frameworkItem` of its last stored message. The
 * next turn concatenates them to rebuild the session the CLI resumes. The
 * format tag is the Python adapter's, so both read the same shape.
 *
 * @module
 */

import { MessageRole, type AgentMessage } from "@dex-agents/contracts";
import {
  deferredToolCall,
  frameworkMessage,
  policyOf,
  RunStateFormat,
  type DeferredToolCall,
  type FrameworkMessage,
  type ResolvedToolPolicy,
} from "@dex-agents/core";

export const FORMAT = "claude-agent-sdk/1";

/** `[subpath, entry]`: the store key's subpath ("" for the main transcript) and one JSONL line. */
export type TranscriptEntry = [string, Record<string, unknown>];

interface StoredItem {
  readonly entries: TranscriptEntry[];
  readonly userText?: string;
}

export function encodeItem(entries: readonly TranscriptEntry[], userText?: string): string {
  return JSON.stringify({ format: FORMAT, entries, ...(userText !== undefined ? { user_text: userText } : {}) });
}

function checkedEntries(raw: unknown, where: string): TranscriptEntry[] {
  if (!Array.isArray(raw)) throw new Error(`${where}: entries is not a list`);
  return raw.map((pair: unknown) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "object" || pair[1] === null) {
      throw new Error(`${where}: an entry is not [subpath, object]`);
    }
    return [pair[0], pair[1] as Record<string, unknown>];
  });
}

export function decodeItem(frameworkItem: string, sequence: bigint): StoredItem {
  const where = `stored message ${sequence}`;
  let item: unknown;
  try {
    item = JSON.parse(frameworkItem);
  } catch (error) {
    throw new Error(`${where} is not a Claude Agent SDK item: ${String(error)}`);
  }
  const record = item as { format?: unknown; entries?: unknown; user_text?: unknown } | null;
  if (record === null || typeof record !== "object" || record.format !== FORMAT) {
    throw new Error(
      `${where} was not stored by ClaudeAgentRunner (frameworkItem format is not ${JSON.stringify(FORMAT)}); a session keeps the runner it started with`,
    );
  }
  return {
    entries: checkedEntries(record.entries, where),
    ...(typeof record.user_text === "string" ? { userText: record.user_text } : {}),
  };
}

/**
 * A turn's run state: its entries so far and the calls the hook deferred in
 * the CLI's last run, in the response's order. The calls are fed back one
 * tool Step at a time (`feedback.ts`).
 */
export interface RunState {
  readonly entries: TranscriptEntry[];
  readonly deferred: DeferredToolCall[];
}

const RUN_STATE = new RunStateFormat({
  adapter: "claude-agent-sdk",
  framework: "@anthropic-ai/claude-agent-sdk",
  // Before the envelope the state carried the item format marker beside its fields.
  legacy: RunStateFormat.marked("format", FORMAT),
});

export function encodeRunState(state: RunState): string {
  // The deferred calls keep the layout they were first stored in: the policy as one object.
  const deferred = state.deferred.map((c) => ({ toolCallId: c.toolCallId, toolName: c.toolName, arguments: c.arguments, policy: policyOf(c) }));
  return RUN_STATE.encode({ entries: state.entries, deferred });
}

interface StoredCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly arguments: string;
  readonly policy: ResolvedToolPolicy;
}

function isDeferredCall(raw: unknown): raw is StoredCall {
  const call = raw as Partial<Record<keyof StoredCall, unknown>> | null;
  const policy = call?.policy as Partial<Record<"effect" | "requiresApproval", unknown>> | null | undefined;
  return (
    typeof call?.toolCallId === "string" &&
    typeof call.toolName === "string" &&
    typeof call.arguments === "string" &&
    typeof policy?.effect === "number" &&
    typeof policy.requiresApproval === "boolean"
  );
}

function readRunState(payload: Record<string, unknown>): RunState {
  const { entries, deferred } = payload;
  if (!Array.isArray(deferred) || !deferred.every(isDeferredCall)) throw new TypeError("its deferred calls are malformed");
  return { entries: checkedEntries(entries, "frameworkRunState"), deferred: deferred.map((c) => deferredToolCall(c, c.policy)) };
}

export function decodeRunState(text: string): RunState {
  return RUN_STATE.decode(text, readRunState);
}

export interface SessionTranscript {
  /** Every stored turn's entries, oldest first. */
  readonly entries: TranscriptEntry[];
  /** User messages stored after the last transcript: the next prompt. */
  readonly pendingUserTexts: string[];
}

export function sessionTranscript(messages: readonly AgentMessage[]): SessionTranscript {
  const entries: TranscriptEntry[] = [];
  let pending: string[] = [];
  for (const message of messages) {
    const item = decodeItem(message.frameworkItem, message.sequence);
    if (item.entries.length > 0) {
      entries.push(...item.entries);
      pending = [];
    }
    if (item.userText !== undefined) pending.push(item.userText);
  }
  return { entries, pendingUserTexts: pending };
}

type Block = Record<string, unknown>;

export function blocks(entry: Record<string, unknown>): Block[] {
  const message = entry["message"] as { content?: unknown } | undefined;
  const content = message?.content;
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];
}

function resultText(block: Block): string {
  const content = block["content"];
  if (typeof content === "string") return content;
  return Array.isArray(content)
    ? content.map((b: Block) => (b["type"] === "text" ? String(b["text"] ?? "") : "")).join("")
    : "";
}

/** Main-transcript entries only: sub-agents' entries stay in the transcript. */
function isMain([subpath, entry]: TranscriptEntry): boolean {
  return subpath === "" && entry["isSidechain"] !== true;
}

/** The tool_use IDs the main transcript has results for. */
export function answeredCalls(entries: readonly TranscriptEntry[]): Set<string> {
  const answered = new Set<string>();
  for (const pair of entries) {
    if (!isMain(pair) || pair[1]["type"] !== "user") continue;
    for (const b of blocks(pair[1])) if (b["type"] === "tool_result") answered.add(String(b["tool_use_id"]));
  }
  return answered;
}

/**
 * The turn's stored messages: one per assistant text, tool use and tool
 * result of the main transcript, in order; the last carries the turn's whole
 * transcript (the user prompt is stored already).
 */
export function projectTurn(entries: readonly TranscriptEntry[], notShown: ReadonlySet<string> = new Set()): FrameworkMessage[] {
  const empty = encodeItem([]);
  const names = new Map<string, string>();
  const messages: FrameworkMessage[] = [];
  for (const pair of entries) {
    if (!isMain(pair)) continue;
    const [, entry] = pair;
    if (entry["type"] === "assistant") {
      for (const b of blocks(entry)) {
        if (b["type"] === "text" && typeof b["text"] === "string" && b["text"] !== "" && entry["isApiErrorMessage"] !== true) {
          messages.push(frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem: empty, text: b["text"] }));
        } else if (b["type"] === "tool_use") {
          const id = String(b["id"]);
          names.set(id, String(b["name"]));
          messages.push(frameworkMessage({
            role: MessageRole.ASSISTANT,
            frameworkItem: empty,
            toolCallId: id,
            toolName: String(b["name"]),
            toolArguments: JSON.stringify(b["input"] ?? {}),
          }));
        }
      }
    } else if (entry["type"] === "user") {
      for (const b of blocks(entry)) {
        if (b["type"] !== "tool_result") continue;
        const id = String(b["tool_use_id"]);
        messages.push(frameworkMessage({ role: MessageRole.TOOL, frameworkItem: empty, toolCallId: id, toolName: names.get(id), toolOutput: resultText(b) }));
      }
    }
  }
  const shown = messages.filter((m) => !(m.text === NO_RESPONSE && m.role === MessageRole.ASSISTANT) && !notShown.has(m.toolCallId ?? ""));
  const whole = encodeItem(entries);
  const last = shown.pop();
  return [...shown, frameworkMessage({ ...(last ?? { role: MessageRole.ASSISTANT, text: "" }), frameworkItem: whole })];
}

/** The CLI's stand-in answer to a user entry it had no prompt for (a fed-back result). */
export const NO_RESPONSE = "No response requested.";
