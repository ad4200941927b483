/**
 * The runner's framework run state: the SDK's `RunState.toString()` plus what
 * Dex needs. `pending` lists the interruptions the session turned into tool
 * calls and `items` the turn's input items so far, so a turn that ends without
 * an answer can store its transcript without reading the SDK's own format;
 * `responses` and `runItems` say which of the resumed run's responses and
 * items are new in the next Step.
 *
 * @module
 */

import type { AgentInputItem } from "@openai/agents";

const VERSION = 1;

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

/** The framework run state cannot be read (another runner's state, or corrupt). */
export class RunStateError extends Error {
  override name = "RunStateError";
}

export function encodeTurnState(state: TurnState): string {
  return JSON.stringify({ version: VERSION, ...state });
}

export function decodeTurnState(text: string | undefined): TurnState | undefined {
  if (text === undefined) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new RunStateError(`unreadable OpenAI Agents run state: ${String(error)}`);
  }
  if (typeof data !== "object" || data === null || (data as { version?: unknown }).version !== VERSION) {
    const version = typeof data === "object" && data !== null ? (data as { version?: unknown }).version : undefined;
    throw new RunStateError(
      `the framework run state was not written by OpenAiAgentsRunner (state version ${JSON.stringify(version ?? null)}, expected ${VERSION})`,
    );
  }
  const state = data as Partial<TurnState>;
  if (
    typeof state.sdkState !== "string" ||
    !Array.isArray(state.pending) ||
    !Array.isArray(state.items) ||
    typeof state.responses !== "number" ||
    typeof state.runItems !== "number"
  ) {
    throw new RunStateError("unreadable OpenAI Agents run state: a field is missing or of the wrong type");
  }
  return state as TurnState;
}
