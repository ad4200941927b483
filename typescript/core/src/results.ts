/**
 * What the model sees for final tool calls: the design's texts, kept exact,
 * the same constants as `dex_agents.results`.
 *
 * @module
 */

import { ToolCallStatus, type AgentToolCall } from "@dex-agents/contracts";

export const USER_REJECTED_RESULT = "The user rejected this tool call.";
export const OUTCOME_UNKNOWN_RESULT =
  "The tool call's outcome is unknown: it stopped without returning a result, so it may or " +
  "may not have taken effect. It will not be retried automatically.";
export const NO_RESULT_TEXT = "The tool call has no result: the turn ended before it finished.";

const FINAL = new Set([
  ToolCallStatus.REJECTED,
  ToolCallStatus.SUCCEEDED,
  ToolCallStatus.FAILED,
  ToolCallStatus.OUTCOME_UNKNOWN,
]);

/** Whether a record's status can no longer change. */
export function isFinal(status: ToolCallStatus): boolean {
  return FINAL.has(status);
}

/** What the model sees for a final record, when resuming and in notes. */
export function modelVisibleResult(record: AgentToolCall): string {
  switch (record.status) {
    case ToolCallStatus.SUCCEEDED:
      return record.output ?? "";
    case ToolCallStatus.FAILED:
      return `The tool call failed: ${record.error ?? ""}`;
    case ToolCallStatus.REJECTED:
      return record.rejectionMessage || USER_REJECTED_RESULT;
    case ToolCallStatus.OUTCOME_UNKNOWN:
      return OUTCOME_UNKNOWN_RESULT;
    default:
      throw new RangeError(`tool call ${JSON.stringify(record.toolCallId)} is not final`);
  }
}

/** What the model sees for a call: its final record's result, or that it never ran (Python's `result_text`). */
export function resultText(record: AgentToolCall | undefined): string {
  return record !== undefined && isFinal(record.status) ? modelVisibleResult(record) : NO_RESULT_TEXT;
}

const FINAL_STATUS_TEXT: ReadonlyMap<ToolCallStatus, string> = new Map([
  [ToolCallStatus.REJECTED, "rejected"],
  [ToolCallStatus.SUCCEEDED, "succeeded"],
  [ToolCallStatus.FAILED, "failed"],
  [ToolCallStatus.OUTCOME_UNKNOWN, "outcome_unknown"],
]);

/**
 * The turn-failure note for the final records, in deferral order; undefined
 * without any. A runner that ends a turn with `turnError` after tool calls
 * ran stores it last, as the session's own turn failure does
 * (`dex_agents.results.turn_failure_note`).
 */
export function turnFailureNote(records: readonly AgentToolCall[]): string | undefined {
  const final = records.filter((r) => isFinal(r.status)).sort((a, b) => a.deferralOrder - b.deferralOrder);
  if (final.length === 0) return undefined;
  return [
    "[Dex] The previous turn failed after these tool calls ran:",
    ...final.map((r) => `- ${r.toolName} ${r.arguments} -> ${FINAL_STATUS_TEXT.get(r.status)}: ${modelVisibleResult(r)}`),
    "Do not repeat these tool calls unless the user asks again.",
  ].join("\n");
}
