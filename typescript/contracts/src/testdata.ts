/**
 * Test support: finds and lists the golden wire vectors of `proto/testdata`.
 * Not part of the package's entry point.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One golden file: its category, message type, case name and paths. */
export interface Vector {
  readonly category: "valid" | "read" | "invalid";
  readonly message: string;
  readonly name: string;
  readonly file: string;
  /** `read/`: the canonical output; `invalid/`: the `.error` file. */
  readonly expectedFile: string | undefined;
}

/**
 * The golden vector directory: `$DEX_TESTDATA_DIR`, else `proto/testdata`
 * of the first ancestor of this file that has one (the repository root).
 */
export function testdataDir(): string {
  const fromEnv = process.env["DEX_TESTDATA_DIR"];
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "proto", "testdata");
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("proto/testdata not found; set DEX_TESTDATA_DIR");
    dir = parent;
  }
}

function listDir(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Every vector under `root`, sorted by category, message and case. */
export function listVectors(root: string): Vector[] {
  const vectors: Vector[] = [];
  for (const category of ["valid", "read", "invalid"] as const) {
    for (const message of listDir(path.join(root, category))) {
      const dir = path.join(root, category, message);
      for (const entry of listDir(dir)) {
        if (!entry.endsWith(".json") || entry.endsWith(".canonical.json")) continue;
        const name = entry.slice(0, -".json".length);
        const expectedFile =
          category === "read"
            ? path.join(dir, `${name}.canonical.json`)
            : category === "invalid"
              ? path.join(dir, `${name}.error`)
              : undefined;
        vectors.push({ category, message, name, file: path.join(dir, entry), expectedFile });
      }
    }
  }
  return vectors;
}

/** The expected error text of an invalid vector: the file minus one trailing newline. */
export function readErrorText(file: string): string {
  const text = readFileSync(file, "utf8");
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}
