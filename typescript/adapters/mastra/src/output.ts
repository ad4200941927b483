/**
 * Structured output for `MastraRunner`, the way Mastra offers it: the schema
 * goes to `agent.stream(messages, { structuredOutput: { schema } })`, Mastra
 * sends it to the model as the response format (or injects it into the prompt
 * with `jsonPromptInjection`), validates the answer and resolves
 * `output.object`. A failed validation arrives as an `error` chunk with code
 * `STRUCTURED_OUTPUT_SCHEMA_VALIDATION_FAILED`; the Stepwise loop of
 * `@dex-agents/core` turns it, or a validator's objection, into a retry Step.
 *
 * @module
 */

import type { StructuredOutput } from "@dex-agents/core";
import type { PublicStructuredOutputOptions } from "@mastra/core/agent";

/** The code of Mastra's error chunk for an answer that failed the schema. */
export const SCHEMA_VALIDATION_FAILED = "STRUCTURED_OUTPUT_SCHEMA_VALIDATION_FAILED";

/** The answer's schema and how to ask for it, plus the application's own check. */
export interface MastraOutput<Value = unknown> extends StructuredOutput<Value> {
  /** A Zod (or other Standard Schema / JSON Schema) schema, as Mastra's `structuredOutput.schema` takes it. */
  readonly schema: PublicStructuredOutputOptions<Value>["schema"];
  /** Mastra's `structuredOutput.jsonPromptInjection`; the provider's response format when unset. */
  readonly jsonPromptInjection?: PublicStructuredOutputOptions<Value>["jsonPromptInjection"];
}

/** Mastra's `structuredOutput` option for one model call; errors stay strict so the loop sees them. */
export function mastraStructuredOutput(output: MastraOutput<any>): PublicStructuredOutputOptions<any> {
  return {
    schema: output.schema,
    errorStrategy: "strict",
    ...(output.jsonPromptInjection !== undefined ? { jsonPromptInjection: output.jsonPromptInjection } : {}),
  };
}

/** The validation message of a schema-failure error chunk, or undefined for any other error. */
export function schemaFailure(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { id, code, message } = error as { id?: unknown; code?: unknown; message?: unknown };
  if (id !== SCHEMA_VALIDATION_FAILED && code !== SCHEMA_VALIDATION_FAILED) return undefined;
  return typeof message === "string" ? message : "The answer did not match the schema.";
}
