import assert from "node:assert/strict";
import { test } from "node:test";

import type { TimelineEntry } from "./api.js";
import { layoutTimeline, MIN_WIDTH_PERCENT } from "./timeline.js";

function entry(fields: Partial<TimelineEntry> & Pick<TimelineEntry, "name" | "at_seconds">): TimelineEntry {
  return {
    kind: "execute",
    step_type: fields.name.split("-")[0] ?? "",
    turn: 1,
    duration_seconds: 0.1,
    attempts: 1,
    failed: false,
    notes: [],
    ...fields,
  };
}

test("parallel Steps stand side by side in rows of their own; a Step's phases share its row", () => {
  const [turn] = layoutTimeline([
    entry({ name: "RunModel-1", at_seconds: 0, duration_seconds: 1 }),
    entry({ name: "CallTool-1", at_seconds: 1.1, duration_seconds: 0.5 }),
    entry({ name: "AwaitToolApproval-1", kind: "wait", at_seconds: 1.1, duration_seconds: 3 }),
    entry({ name: "AwaitToolApproval-1", at_seconds: 4.1, duration_seconds: 0.01 }),
    entry({ name: "RunModel-2", at_seconds: 4.2, duration_seconds: 0.8 }),
  ]);
  assert.ok(turn);
  assert.deepEqual(turn.rows, ["RunModel-1", "CallTool-1", "AwaitToolApproval-1", "RunModel-2"]);
  assert.equal(turn.lanes, 4);
  const [wait, execute] = turn.bars.filter((b) => b.entry.name === "AwaitToolApproval-1");
  assert.equal(wait!.lane, execute!.lane);
  const tool = turn.bars.find((b) => b.entry.name === "CallTool-1")!;
  assert.notEqual(tool.lane, wait!.lane);
  assert.equal(tool.leftPercent, wait!.leftPercent);
  assert.ok(execute!.leftPercent >= wait!.leftPercent + wait!.widthPercent - 1e-9);
});

test("a retried Step is marked and labelled with its attempt; RPCs and the close are markers", () => {
  const [, turn] = layoutTimeline([
    entry({ name: "StartAgentSession-1", at_seconds: 0, turn: 0 }),
    entry({ name: "RunModel-1", at_seconds: 1, attempts: 2, notes: ["retried: attempt 1 Worker killed or lost"] }),
    entry({ name: "send_user_message", kind: "rpc", at_seconds: 0.9, duration_seconds: null }),
    entry({ name: "FLOW_STATUS_CANCELED", kind: "closed", at_seconds: 3, duration_seconds: null }),
  ]);
  assert.ok(turn);
  assert.equal(turn.bars.length, 1);
  assert.equal(turn.bars[0]!.retried, true);
  assert.match(turn.bars[0]!.label, /attempt 2/);
  assert.deepEqual(
    turn.markers.map((m) => m.label),
    ["rpc send_user_message", "closed FLOW_STATUS_CANCELED"],
  );
});

test("a Step still running stretches to the turn's end and no bar is thinner than the minimum", () => {
  const [turn] = layoutTimeline([
    entry({ name: "RunModel-1", at_seconds: 0, duration_seconds: 0.001 }),
    entry({ name: "CallTool-1", at_seconds: 5, duration_seconds: 1 }),
    entry({ name: "RunModel-2", kind: "running", at_seconds: 6, duration_seconds: null }),
  ]);
  assert.ok(turn);
  for (const bar of turn.bars) assert.ok(bar.widthPercent >= MIN_WIDTH_PERCENT, bar.label);
  const running = turn.bars.find((b) => b.entry.kind === "running")!;
  assert.ok(running.leftPercent + running.widthPercent <= 100.0001);
});
