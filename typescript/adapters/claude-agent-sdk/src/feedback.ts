/**
 * Feeding deferred calls' results back into the transcript, one tool Step at
 * a time.
 *
 * The CLI asks the PreToolUse hook about every call of a response, also after
 * it deferred one, so a run may defer several calls (it reports only the last
 * in `deferred_tool_use`). The runner requests them one per RunModel, in the
 * response's order: each later RunModel writes the results of the calls that
 * have final records and requests the first call that has none, without
 * starting the CLI; once every call has its result, the CLI resumes. So each
 * call gets its own approval and tool Step after the one before it ran, as in
 * the Python adapter, where the resumed CLI re-runs each deferred call's hook.
 *
 * The CLI's own resume of a deferred call cannot be used here: with SDK
 * 0.3.336 it looks for the tool before the SDK's in-process servers have
 * connected and ends with `tool_deferred_unavailable`. So the result goes in
 * as a `tool_result` entry shaped like the CLI's own.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { ToolCallStatus, type AgentToolCall } from "@dex-agents/contracts";
import { isFinal, modelVisibleResult, type DeferredToolCall } from "@dex-agents/core";
import { answeredCalls, blocks, type RunState, type TranscriptEntry } from "./transcript.js";

/** A tool_result entry for `record`, shaped like the CLI's own, after the transcript's last entry. */
function resultEntry(entries: readonly TranscriptEntry[], record: AgentToolCall, sessionId: string): TranscriptEntry {
  const main = entries.filter(([subpath, e]) => subpath === "" && typeof e["uuid"] === "string");
  const leaf = main.at(-1)?.[1];
  const source = main.find(([, e]) => e["type"] === "assistant" && blocks(e).some((b) => b["id"] === record.toolCallId))?.[1];
  const content = [{ type: "text", text: modelVisibleResult(record) }];
  return [
    "",
    {
      parentUuid: leaf?.["uuid"] ?? null,
      isSidechain: false,
      type: "user",
      message: { role: "user", content: [{ tool_use_id: record.toolCallId, type: "tool_result", content, is_error: record.status !== ToolCallStatus.SUCCEEDED }] },
      uuid: randomUUID(),
      timestamp: new Date().toISOString(),
      toolUseResult: content,
      sourceToolAssistantUUID: source?.["uuid"],
      userType: "external",
      sessionId,
      cwd: leaf?.["cwd"],
      version: leaf?.["version"],
    },
  ];
}

/** `calls` in the order the main transcript's assistant entries asked for them. */
export function inResponseOrder(calls: Iterable<DeferredToolCall>, entries: readonly TranscriptEntry[]): DeferredToolCall[] {
  const asked = entries
    .filter(([subpath, e]) => subpath === "" && e["type"] === "assistant")
    .flatMap(([, e]) => blocks(e).filter((b) => b["type"] === "tool_use").map((b) => String(b["id"])));
  const position = (call: DeferredToolCall): number => {
    const index = asked.indexOf(call.toolCallId);
    return index === -1 ? asked.length : index;
  };
  return [...calls].sort((a, b) => position(a) - position(b));
}

export interface FedBack {
  /** The turn's entries with the results written so far. */
  readonly entries: TranscriptEntry[];
  /** The first deferred call with no record yet: the next tool Step. Absent: all answered. */
  readonly next?: DeferredToolCall;
}

/**
 * The run state's entries plus a result for each deferred call with a final
 * record, in order, up to the first call the session has not run yet.
 * `history` is the session's stored transcript before this turn.
 */
export function feedBack(
  state: RunState,
  records: readonly AgentToolCall[],
  history: readonly TranscriptEntry[],
  sessionId: string,
): FedBack {
  const entries = [...state.entries];
  const answered = answeredCalls(entries);
  for (const call of state.deferred) {
    if (answered.has(call.toolCallId)) continue;
    const record = records.find((r) => r.toolCallId === call.toolCallId);
    if (record === undefined) return { entries, next: call };
    if (!isFinal(record.status)) throw new Error(`the turn has no final record of deferred tool call ${JSON.stringify(call.toolCallId)}`);
    entries.push(resultEntry([...history, ...entries], record, sessionId));
  }
  return { entries };
}
