/**
 * The runner's framework run state: the SDK's `RunState.toString()` plus what
 * Dex needs. `pending` lists the interruptions the session turned into tool
 * calls and `items` the turn's input items so far, so a turn that ends without
 * an answer can store its transcript without reading the SDK's own format;
 * `responses` and `runItems` say which of the resumed run's responses and
 * items are new in the next Step. It travels in the kit's run-state envelope;
 * a state written before it (`{"version": 1, ...}`) still resumes.
 *
 * @module
 */

import { RunStateFormat } from "@dex-agents/core";
import type { AgentInputItem } from "@openai/agents";

export interface PendingCall {
  readonly toolCallId: string;
  readonly toolName: string;
}

export interface TurnState {
  readonly sdkState: string;
  readonly pending: readonly PendingCall[];
  readonly items: readonly AgentInputItem[];
  readonly responses: number;
  readonly runItems: number;
}

/** The layout before the envelope: the same fields beside `version: 1`. */
const FORMAT = new RunStateFormat({ adapter: "openai-agents", framework: "@openai/agents", legacy: RunStateFormat.marked("version", 1) });

function read(payload: Record<string, unknown>): TurnState {
  const state = payload as Partial<TurnState>;
  if (
    typeof state.sdkState !== "string" ||
    !Array.isArray(state.pending) ||
    !Array.isArray(state.items) ||
    typeof state.responses !== "number" ||
    typeof state.runItems !== "number"
  ) {
    throw new TypeError("a field is missing or of the wrong type");
  }
  return state as TurnState;
}

export function encodeTurnState(state: TurnState): string {
  return FORMAT.encode({ ...state });
}

export function decodeTurnState(text: string | undefined): TurnState | undefined {
  return text === undefined ? undefined : FORMAT.decode(text, read);
}
