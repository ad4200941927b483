// The cross-language fuzz corpus: values the Python strategies generated
// (python/contracts/tests/test_fuzz_codecs.py), as the Python codec wrote them.
// Each valid line must decode and re-encode to the same text; each invalid
// line is `[text, error]` and must fail with exactly that WireFormatError text.
// Reads `proto/testdata/fuzz`, or the directory in DEX_FUZZ_CORPUS (a larger
// corpus written with `test_fuzz_codecs.py --out DIR`).

import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import type { Message } from "@bufbuild/protobuf";

import type { Codec } from "./index.js";
import { codecs, WireFormatError } from "./index.js";
import { testdataDir } from "./testdata.js";

const byName = codecs as unknown as Record<string, Codec<Message> | undefined>;

function corpusDir(): string {
  const fromEnv = process.env["DEX_FUZZ_CORPUS"];
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : path.join(testdataDir(), "fuzz");
}

/** The corpus files of one kind: message name and lines (the file ends in a newline). */
function files(kind: "valid" | "invalid"): [string, string[]][] {
  const dir = path.join(corpusDir(), kind);
  assert.ok(existsSync(dir), `no fuzz corpus at ${dir}`);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => {
      const lines = readFileSync(path.join(dir, name), "utf8").split("\n");
      assert.equal(lines.pop(), "", `${name}: must end in a newline`);
      return [name.slice(0, -".jsonl".length), lines];
    });
}

function codecFor(message: string): Codec<Message> {
  const codec = byName[message];
  assert.ok(codec !== undefined, `fuzz corpus names an unknown message ${message}`);
  return codec;
}

test("every message type has fuzz corpus lines", () => {
  for (const kind of ["valid", "invalid"] as const) {
    const found = new Set(files(kind).map(([message]) => message));
    const missing = Object.keys(byName).filter((name) => !found.has(name));
    assert.deepEqual(missing, [], `${kind}: messages without corpus lines`);
  }
});

test("valid fuzz corpus values re-encode to the Python bytes", () => {
  let count = 0;
  for (const [message, lines] of files("valid")) {
    const codec = codecFor(message);
    for (const line of lines) {
      const value = codec.decode(line);
      assert.equal(codec.encode(value), line, `${message}: re-encoded differently`);
      assert.equal(codec.encode(codec.decode(new TextEncoder().encode(line))), line);
      count++;
    }
  }
  assert.ok(count > 0);
});

test("invalid fuzz corpus values fail with the Python error text", () => {
  let count = 0;
  for (const [message, lines] of files("invalid")) {
    const codec = codecFor(message);
    for (const line of lines) {
      const [text, expected] = JSON.parse(line) as [string, string];
      assert.throws(
        () => codec.decode(text),
        (error: unknown) => {
          assert.ok(error instanceof WireFormatError, `${message}: threw ${String(error)} for ${text}`);
          assert.equal(error.message, expected, `${message}: for ${text}`);
          return true;
        },
      );
      count++;
    }
  }
  assert.ok(count > 0);
});
