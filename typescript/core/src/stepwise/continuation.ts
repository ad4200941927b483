/**
 * The turn-continuation hook: keep a turn going after the model answered or
 * called tools (design document, "decide_turn_continuation").
 *
 * @module
 */

import type { ModelToolCall } from "./model.js";

/** A turn fails (`turnError`) when the hook continues it more often in a row. */
export const MAX_CONSECUTIVE_CONTINUATIONS = 8;

/** Make another model call in this turn, showing the model `message` as user text. */
export interface TurnContinuation {
  readonly continueWith: string;
}

/**
 * After an answer: a continuation, or undefined/`end` to end the turn. After
 * tool calls: a continuation shown after the results, `end` to end the turn
 * with the results and no further model call, or undefined to give the model
 * the results as usual.
 */
export type TurnContinuationDecision = TurnContinuation | "end" | undefined;

export interface TurnContinuationContext {
  readonly flowId: string;
  readonly turnId: string;
  /** The response's text (the answer, when there are no tool calls). */
  readonly text: string | undefined;
  /** Empty after an answer. */
  readonly toolCalls: readonly ModelToolCall[];
  /** Continuations in a row before this response. */
  readonly consecutiveContinuations: number;
  readonly sessionSettings: Readonly<Record<string, unknown>>;
}

export type TurnContinuationHook = (
  context: TurnContinuationContext,
) => TurnContinuationDecision | Promise<TurnContinuationDecision>;

export function tooManyContinuations(): string {
  return (
    `the turn was continued more than ${MAX_CONSECUTIVE_CONTINUATIONS} times in a row ` +
    "by decide_turn_continuation"
  );
}
