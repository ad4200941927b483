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

test("Steps running at the same time get lanes of their own; later ones reuse a lane", () => {
  const [turn] = layoutTimeline([
    entry({ name: "RunModel-1", at_seconds: 0, duration_seconds: 1 }),
    entry({ name: "CallTool-1", at_seconds: 1.1, duration_seconds: 0.5 }),
    entry({ name: "CallTool-2", kind: "wait", at_seconds: 1.1, duration_seconds: 3 }),
    entry({ name: "RunModel-2", at_seconds: 4.2, duration_seconds: 0.8 }),
  ]);
  assert.ok(turn);
  const lanes = Object.fromEntries(turn.bars.map((b) => [b.entry.name, b.lane]));
  assert.notEqual(lanes["CallTool-1"], lanes["CallTool-2"]);
  assert.equal(lanes["RunModel-1"], 0);
  assert.equal(lanes["RunModel-2"], 0);
  assert.equal(turn.lanes, 2);
  const one = turn.bars.find((b) => b.entry.name === "CallTool-1")!;
  const two = turn.bars.find((b) => b.entry.name === "CallTool-2")!;
  assert.equal(one.leftPercent, two.leftPercent);
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
