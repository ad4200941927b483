/**
 * A tool call's values as text, converted alike by every adapter (the Python
 * kit's `parse_tool_arguments` and `tool_output_text`): the model sees the same
 * argument error and the same result text whichever framework runs the tool.
 *
 * @module
 */

import { ToolExecutionError } from "./runner.js";

/**
 * A call's arguments as an object: strict JSON object text, empty text being
 * no arguments.
 *
 * @throws ToolExecutionError `arguments must be a JSON object`, so the model sees it.
 */
export function parseToolArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ToolExecutionError("arguments must be a JSON object");
  }
  return value as Record<string, unknown>;
}

/** A tool's return value as the text the model sees: text as it is, JSON for the rest, empty for nothing. */
export function toolOutputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output === undefined || output === null) return "";
  return JSON.stringify(output);
}
