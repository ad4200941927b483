/**
 * The Stepwise run state: the turn's items the session has not stored yet,
 * plus the continuation bookkeeping; compact JSON, opaque to the session and
 * the same shape as the Python loop's.
 *
 * @module
 */

import type { TurnContinuation } from "./continuation.js";
import { RunStateError } from "../errors.js";
import { itemFromJson, type Item } from "./items.js";

const VERSION = 1;

export interface RunState {
  readonly items: readonly Item[];
  readonly consecutiveContinuations: number;
  /** The hook's decision on the pending tool calls, applied on resume. */
  readonly afterToolCalls: TurnContinuation | "end" | undefined;
  /** Structured-output retries in a row (absent: none). */
  readonly outputRetries?: number;
}

export const EMPTY_RUN_STATE: RunState = { items: [], consecutiveContinuations: 0, afterToolCalls: undefined };

export function encodeRunState(state: RunState): string {
  const value: Record<string, unknown> = { version: VERSION, items: state.items };
  if (state.consecutiveContinuations) value["consecutive_continuations"] = state.consecutiveContinuations;
  if (state.outputRetries) value["output_retries"] = state.outputRetries;
  if (state.afterToolCalls === "end") value["after_tool_calls"] = { decision: "end" };
  else if (state.afterToolCalls !== undefined) {
    value["after_tool_calls"] = { decision: "continue", message: state.afterToolCalls.continueWith };
  }
  return JSON.stringify(value);
}

/** Reads a run state; undefined (a turn's first model call) is the empty state. */
export function decodeRunState(text: string | undefined): RunState {
  if (text === undefined) return EMPTY_RUN_STATE;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new RunStateError(`the run state is not JSON: ${String(error)}`);
  }
  if (typeof value !== "object" || value === null || (value as Record<string, unknown>)["version"] !== VERSION) {
    throw new RunStateError(`the run state is not a version ${VERSION} Stepwise run state: ${text.slice(0, 200)}`);
  }
  const v = value as Record<string, unknown>;
  const items = v["items"];
  if (!Array.isArray(items)) throw new RunStateError("the run state has no `items` list");
  const count = v["consecutive_continuations"] ?? 0;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
    throw new RunStateError("`consecutive_continuations` must be a non-negative integer");
  }
  const retries = v["output_retries"] ?? 0;
  if (typeof retries !== "number" || !Number.isInteger(retries) || retries < 0) {
    throw new RunStateError("`output_retries` must be a non-negative integer");
  }
  const after = v["after_tool_calls"] as Record<string, unknown> | undefined;
  let decision: RunState["afterToolCalls"];
  if (after?.["decision"] === "end") decision = "end";
  else if (typeof after?.["message"] === "string") decision = { continueWith: after["message"] };
  else if (after !== undefined) throw new RunStateError(`unknown \`after_tool_calls\` value ${JSON.stringify(after)}`);
  return {
    items: items.map(itemFromJson),
    consecutiveContinuations: count,
    afterToolCalls: decision,
    ...(retries ? { outputRetries: retries } : {}),
  };
}

/** Tool calls in the state that have no result item yet, in call order. */
export function unansweredToolCalls(state: RunState): Extract<Item, { type: "tool_call" }>[] {
  const answered = new Set(state.items.flatMap((i) => (i.type === "tool_result" ? [i.tool_call_id] : [])));
  return state.items.flatMap((i) => (i.type === "tool_call" && !answered.has(i.tool_call_id) ? [i] : []));
}
