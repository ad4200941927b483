/**
 * A runner's checked-in `capabilities.json` kept equal to its live `describe()`.
 * docs/adapters.md's table (tools/capabilities) is assembled from these files, so
 * it is checked without Node or any framework; each adapter's own test keeps its
 * file true. The format matches Python's `dex_agents_testing.capabilities`.
 *
 * @module
 */

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CAPABILITIES, describeRunner, supports } from "../capabilities.js";
import type { AgentFrameworkRunner } from "../runner.js";

/** Set to 1 (tools/capabilities.sh does) to rewrite the file instead of checking it. */
export const WRITE_CAPABILITIES_VARIABLE = "DEX_WRITE_CAPABILITIES";

/** The runner's checked description as capabilities.json holds it (proto order). */
export function capabilitiesDeclaration(runner: AgentFrameworkRunner<unknown>): {
  runner: string;
  supported: string[];
  unsupported: Record<string, string>;
} {
  const capabilities = describeRunner(runner);
  const reasons = new Map(capabilities.gaps.map((g) => [g.capability, g.reason]));
  assert.equal(reasons.size, capabilities.gaps.length, "a capability has two reasons");
  const supported = CAPABILITIES.filter((c) => supports(capabilities, c));
  const unsupported = CAPABILITIES.filter((c) => reasons.has(c));
  assert.deepEqual(
    [...supported, ...unsupported].sort(),
    [...CAPABILITIES].sort(),
    "each capability is either supported or has a reason",
  );
  return {
    runner: runner.constructor.name,
    supported,
    unsupported: Object.fromEntries(unsupported.map((c) => [c, reasons.get(c) ?? ""])),
  };
}

/**
 * Asserts `file` holds `runner`'s declaration. With `DEX_WRITE_CAPABILITIES=1` it
 * writes it instead: at `workspacePath` under `BUILD_WORKSPACE_DIRECTORY` when
 * `bazel run` sets it, else at `file`.
 *
 * @param file - the file beside the compiled test, e.g. `new URL("../capabilities.json", import.meta.url)`.
 * @param workspacePath - the same file relative to the repository root.
 */
export function checkCapabilitiesFile(runner: AgentFrameworkRunner<unknown>, file: URL, workspacePath: string): void {
  const text = `${JSON.stringify(capabilitiesDeclaration(runner), null, 2)}\n`;
  if (process.env[WRITE_CAPABILITIES_VARIABLE] === "1") {
    const root = process.env.BUILD_WORKSPACE_DIRECTORY;
    writeFileSync(root !== undefined && root !== "" ? join(root, workspacePath) : file, text);
    return;
  }
  const stored = existsSync(file) ? readFileSync(file, "utf8") : "";
  assert.equal(
    stored,
    text,
    `${workspacePath} is not what ${runner.constructor.name}.describe() declares; ` +
      `rewrite it and docs/adapters.md with \`tools/capabilities.sh ${workspacePath}\``,
  );
}
