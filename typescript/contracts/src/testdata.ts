/**
 * Test support: finds and lists the golden wire vectors of `proto/testdata`.
 * Not part of the package's entry point.
 *
 * @module
 */

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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

/** The vectors under a testdata root, and what does not fit the layout. */
export interface Listing {
  readonly vectors: Vector[];
  /** Stray files and vectors without their companion file, as relative paths. */
  readonly problems: string[];
}

/** Every vector under `root`, sorted by category, message and case. */
export function listVectors(root: string): Listing {
  const vectors: Vector[] = [];
  const problems: string[] = [];
  for (const category of ["valid", "read", "invalid"] as const) {
    for (const message of listDir(path.join(root, category))) {
      const dir = path.join(root, category, message);
      if (!statSync(dir).isDirectory()) {
        problems.push(`${category}/${message}: not a message directory`);
        continue;
      }
      const entries = new Set(listDir(dir));
      for (const entry of entries) {
        const where = `${category}/${message}/${entry}`;
        const companion =
          entry.endsWith(".canonical.json") && category === "read"
            ? entry.replace(/\.canonical\.json$/, ".json")
            : entry.endsWith(".error") && category === "invalid"
              ? entry.replace(/\.error$/, ".json")
              : undefined;
        if (companion !== undefined) {
          if (!entries.has(companion)) problems.push(`${where}: no ${companion}`);
          continue;
        }
        if (!entry.endsWith(".json") || entry.endsWith(".canonical.json")) {
          problems.push(`${where}: unexpected file`);
          continue;
        }
        const name = entry.slice(0, -".json".length);
        let expectedFile: string | undefined;
        if (category !== "valid") {
          const expected = category === "read" ? `${name}.canonical.json` : `${name}.error`;
          if (!entries.has(expected)) {
            problems.push(`${where}: no ${expected}`);
            continue;
          }
          expectedFile = path.join(dir, expected);
        }
        vectors.push({ category, message, name, file: path.join(dir, entry), expectedFile });
      }
    }
  }
  return { vectors, problems };
}

/** The expected error text of an invalid vector: the file minus one trailing newline. */
export function readErrorText(file: string): string {
  const text = readFileSync(file, "utf8");
  return text.endsWith("\n") ? text.slice(0, -1) : text;
}
