/**
 * Structured output on the Stepwise loop: the model client asks its framework
 * for an answer of the agent's schema, and the loop checks what comes back. A
 * bad answer is not a failed turn: it is stored with a retry prompt and the
 * next RunModel Step asks again (`turn_continued`), up to `maxRetries` in a
 * row, as `@dex-agents/vercel-ai` does with the `ai` SDK's output specs.
 *
 * @module
 */

import type { ModelResponse } from "./model.js";

/** What the agent answers with is the client's schema; this is the loop's side of it. */
export interface StructuredOutput<Value = unknown> {
  /**
   * Checks an answer that matched the schema: a string is the retry prompt the
   * model gets in the next RunModel Step; `undefined` accepts the answer.
   */
  validate?(value: Value): string | undefined | Promise<string | undefined>;
  /** Retries in a row before the turn fails; 2 unless set. */
  readonly maxRetries?: number;
}

export const DEFAULT_OUTPUT_RETRIES = 2;

/** The retry prompt for an answer the client could not read, or from the validator; undefined accepts. */
export async function checkStructuredOutput(
  output: StructuredOutput<any>,
  response: ModelResponse,
): Promise<string | undefined> {
  if (response.outputError !== undefined) {
    return `${response.outputError} Answer again with only the JSON the response format asks for.`;
  }
  if (response.output === undefined) {
    throw new Error("the model client answered without structured output although the agent asks for it");
  }
  return output.validate === undefined ? undefined : await output.validate(response.output);
}

/** The turn error once the retries in a row are spent. */
export function outputRetriesSpent(limit: number, retryPrompt: string): string {
  return `the answer failed its output check ${limit + 1} times in a row: ${retryPrompt}`;
}
