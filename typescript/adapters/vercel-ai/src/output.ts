/**
 * Structured output for `VercelAiRunner`: the `ai` SDK's `Output` spec shapes
 * the model's answer (its response format), and the runner checks the answer
 * itself so that a bad one becomes one more RunModel Step with a retry prompt
 * instead of a failed turn.
 *
 * @module
 */

import { NoObjectGeneratedError, type OutputInterface } from "ai";

/** What the model must answer with, and the application's own check of it. */
export interface VercelAiOutput<Value = unknown> {
  /** An `ai` output spec, e.g. `Output.object({ schema })`; its response format goes to the model. */
  readonly spec: OutputInterface<Value, any, any>;
  /**
   * Checks an answer that matched the schema: a string is the retry prompt the
   * model gets in the next RunModel Step; `undefined` accepts the answer.
   */
  validate?(value: Value): string | undefined | Promise<string | undefined>;
  /** Retries in a row before the turn fails; 2 unless set. */
  readonly maxRetries?: number;
}

export const DEFAULT_OUTPUT_RETRIES = 2;

/** An accepted answer, or the prompt that asks the model to answer again. */
export type OutputCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly retryPrompt: string };

type ParseContext = Parameters<OutputInterface["parseCompleteOutput"]>[1];

/**
 * Parses `text` with the spec, then runs the validator. A parse or schema
 * failure is a retry too: the model sees what was wrong.
 */
export async function checkOutput(output: VercelAiOutput, text: string, context: ParseContext): Promise<OutputCheck> {
  let value: unknown;
  try {
    value = await output.spec.parseCompleteOutput({ text }, context);
  } catch (error) {
    if (!NoObjectGeneratedError.isInstance(error)) throw error;
    const cause = error.cause instanceof Error ? ` ${error.cause.message}` : "";
    return {
      ok: false,
      retryPrompt: `${error.message}${cause} Answer again with only the JSON the response format asks for.`,
    };
  }
  const retry = output.validate === undefined ? undefined : await output.validate(value);
  return retry === undefined ? { ok: true, value } : { ok: false, retryPrompt: retry };
}
