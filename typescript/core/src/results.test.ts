import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { AgentToolCallSchema, ToolCallStatus } from "@dex-agents/contracts";
import { NO_RESULT_TEXT, OUTCOME_UNKNOWN_RESULT, resultText, turnFailureNote } from "./index.js";

test("the turn-failure note lists the final records in deferral order, as dex_agents.results does", () => {
  const record = (toolCallId: string, deferralOrder: number, status: ToolCallStatus, output?: string) =>
    create(AgentToolCallSchema, { toolCallId, toolName: "charge", arguments: '{"usd":5}', deferralOrder, status, ...(output !== undefined ? { output } : {}) });
  assert.equal(turnFailureNote([record("a", 0, ToolCallStatus.APPROVED)]), undefined);
  assert.equal(
    turnFailureNote([
      record("b", 1, ToolCallStatus.OUTCOME_UNKNOWN),
      record("a", 0, ToolCallStatus.SUCCEEDED, "charged 5 USD"),
      record("c", 2, ToolCallStatus.AWAITING_APPROVAL),
    ]),
    "[Dex] The previous turn failed after these tool calls ran:\n" +
      '- charge {"usd":5} -> succeeded: charged 5 USD\n' +
      `- charge {"usd":5} -> outcome_unknown: ${OUTCOME_UNKNOWN_RESULT}\n` +
      "Do not repeat these tool calls unless the user asks again.",
  );
});

test("a call's result text is its final record's result, or that it never ran", () => {
  const record = (status: ToolCallStatus) => create(AgentToolCallSchema, { toolCallId: "c", toolName: "t", status, output: "done" });
  assert.equal(resultText(record(ToolCallStatus.SUCCEEDED)), "done");
  assert.equal(resultText(record(ToolCallStatus.OUTCOME_UNKNOWN)), OUTCOME_UNKNOWN_RESULT);
  assert.equal(resultText(record(ToolCallStatus.APPROVED)), NO_RESULT_TEXT);
  assert.equal(resultText(undefined), NO_RESULT_TEXT);
});
