/** convertAgentSnapshotToUIMessages on snapshots written as wire JSON. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { decodeAgentSnapshot } from "@dex-agents/contracts";

import { convertAgentSnapshotToUIMessages } from "./messages.js";
import { plain } from "./testing.js";

function snapshot(value: Record<string, unknown>): ReturnType<typeof decodeAgentSnapshot> {
  return decodeAgentSnapshot(JSON.stringify(value));
}

const user = (sequence: number, turn: string, text: string) => ({ sequence, turn_id: turn, role: "user", text });
const said = (sequence: number, turn: string, text: string) => ({ sequence, turn_id: turn, role: "assistant", text });
const call = (sequence: number, turn: string, id: string, args: string) => ({
  sequence,
  turn_id: turn,
  role: "assistant",
  tool_call_id: id,
  tool_name: "lookup",
  tool_arguments: args,
});
const result = (sequence: number, turn: string, id: string, output: string) => ({
  sequence,
  turn_id: turn,
  role: "tool",
  tool_call_id: id,
  tool_name: "lookup",
  tool_output: output,
});

test("one turn is one assistant message; each model call is a step", () => {
  const messages = convertAgentSnapshotToUIMessages(
    snapshot({
      messages: [
        user(1, "t1", "find it"),
        call(2, "t1", "c1", '{"q":"x"}'),
        result(3, "t1", "c1", "found x"),
        said(4, "t1", "looked up"),
        user(5, "t2", "thanks"),
        said(6, "t2", "you are welcome"),
      ],
    }),
  );
  assert.deepEqual(plain(messages[0]!), { id: "user_1", role: "user", parts: [{ type: "text", text: "find it" }] });
  assert.deepEqual(plain(messages[1]!), {
    id: "msg_t1",
    role: "assistant",
    metadata: { turnId: "t1" },
    parts: [
      { type: "step-start" },
      { type: "dynamic-tool", toolName: "lookup", toolCallId: "c1", state: "output-available", input: { q: "x" }, output: "found x" },
      { type: "step-start" },
      { type: "text", text: "looked up", state: "done" },
    ],
  });
  assert.deepEqual(
    messages.map((m) => m.id),
    ["user_1", "msg_t1", "user_5", "msg_t2"],
  );
});

test("a user message between two model calls of one turn starts the next step", () => {
  const [, reply] = convertAgentSnapshotToUIMessages(
    snapshot({
      messages: [user(1, "t1", "first"), said(2, "t1", "one"), user(3, "t1", "and then"), said(4, "t1", "two")],
    }),
  );
  assert.deepEqual(plain(reply!), {
    id: "msg_t1",
    role: "assistant",
    metadata: { turnId: "t1" },
    parts: [
      { type: "step-start" },
      { type: "text", text: "one", state: "done" },
      { type: "steering-message", id: "user_3", parts: [{ type: "text", text: "and then" }] },
      { type: "step-start" },
      { type: "text", text: "two", state: "done" },
    ],
  });
});

test("the active turn shows its approval asked and its pending question", () => {
  const messages = convertAgentSnapshotToUIMessages(
    snapshot({
      state: { status: "running_tools", turn_count: 0, active_turn_id: "t1" },
      messages: [user(1, "t1", "deploy"), { ...call(2, "t1", "c1", '{"target":"prod"}'), tool_name: "deploy" }],
      tool_calls: [
        { tool_call_id: "c1", turn_id: "t1", tool_name: "deploy", arguments: '{"target":"prod"}', status: "awaiting_approval", requires_approval: true },
      ],
      pending_interrupts: [
        { interrupt_id: "c1", kind: "tool_approval", tool_call_id: "c1", tool_name: "deploy", arguments: "{}" },
        { interrupt_id: "q1", kind: "question", tool_call_id: "c2", tool_name: "ask", arguments: "{}", question: "Which?", choices: ["a", "b"] },
      ],
    }),
  );
  const reply = plain(messages[1]!) as { parts: unknown[] };
  assert.deepEqual(reply.parts, [
    { type: "step-start" },
    { type: "dynamic-tool", toolName: "deploy", toolCallId: "c1", state: "approval-requested", input: { target: "prod" }, approval: { id: "c1" } },
    {
      type: "data-question",
      id: "q1",
      data: { interruptId: "q1", toolCallId: "c2", question: "Which?", choices: ["a", "b"], allowsFreeText: true, answered: false },
    },
  ]);
});

test("an active turn with no stored reply yet still gets its message", () => {
  const messages = convertAgentSnapshotToUIMessages(
    snapshot({ state: { status: "running_model", active_turn_id: "t1" }, messages: [user(1, "t1", "hi")] }),
  );
  assert.deepEqual(
    messages.map((m) => m.id),
    ["user_1"],
  );
});

test("a turn steering started goes on in the message of the turn it steered", () => {
  const value = snapshot({
    messages: [
      user(1, "t1", "hold on"),
      call(2, "t1", "c1", '{"q":"x"}'),
      result(3, "t1", "c1", "found x"),
      user(4, "t2", "go left"),
      user(5, "t2", "and say so"),
      said(6, "t2", "going left"),
      user(7, "t3", "thanks"),
      said(8, "t3", "welcome"),
    ],
  });
  const messages = convertAgentSnapshotToUIMessages(value, { steeredTurns: ["t2"] });
  assert.deepEqual(
    messages.map((m) => m.id),
    ["user_1", "msg_t1", "user_7", "msg_t3"],
  );
  assert.deepEqual(plain(messages[1]!), {
    id: "msg_t1",
    role: "assistant",
    metadata: { turnId: "t1" },
    parts: [
      { type: "step-start" },
      { type: "dynamic-tool", toolName: "lookup", toolCallId: "c1", state: "output-available", input: { q: "x" }, output: "found x" },
      { type: "steering-message", id: "user_4", parts: [{ type: "text", text: "go left" }] },
      { type: "steering-message", id: "user_5", parts: [{ type: "text", text: "and say so" }] },
      { type: "step-start" },
      { type: "text", text: "going left", state: "done" },
    ],
  });
  // Without the steered turns, each turn keeps its own messages.
  assert.deepEqual(
    convertAgentSnapshotToUIMessages(value).map((m) => m.id),
    ["user_1", "msg_t1", "user_4", "user_5", "msg_t2", "user_7", "msg_t3"],
  );
});
