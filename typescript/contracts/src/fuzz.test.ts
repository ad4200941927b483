// Seeded, bounded fuzzing of every decoder: random JSON and mutations of the
// golden vectors. Whatever the input, a decoder either throws a
// WireFormatError or returns a value that re-encodes to a fixed point.
// Set DEX_FUZZ_SEED / DEX_FUZZ_ROUNDS to explore beyond the default run.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import type { Message } from "@bufbuild/protobuf";

import type { Codec } from "./index.js";
import { codecs, WireFormatError } from "./index.js";
import { listVectors, testdataDir } from "./testdata.js";

const SEED = Number(process.env["DEX_FUZZ_SEED"] ?? 20261202);
const ROUNDS = Number(process.env["DEX_FUZZ_ROUNDS"] ?? 4000);

/** mulberry32: small, fast and good enough to drive mutations reproducibly. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(SEED);
const int = (n: number): number => Math.floor(random() * n);
const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;

const registry = Object.values(codecs as unknown as Record<string, Codec<Message>>);

const STRANGE_NUMBERS = [
  "1e400", "-1e400", "9007199254740993", "-9007199254740992", "2147483648", "-2147483649",
  "1e21", "0.5", "-0", "5.0", "1E2", "123456789012345678901234567890", "4.9e-324",
];
const STRANGE_STRINGS = [
  '"\\ud800"', '"a\\udfffb"', '"\\ud83d\\ude00"', '"unspecified"', '"UNSPECIFIED"', '"Running_Model"',
  '"bot"', '""', '"2026-11-01T12:00:00Z"', '"2026-02-30T00:00:00Z"', '"2026-11-01T12:00:00.1234567891Z"',
  '"\\u0000\\u2028"', '"user"', '"read"', '"succeeded"', '"chat"', '"answered"',
];
const STRANGE_VALUES = [
  "null", "true", "false", "[]", "{}", "[null]", "[{}]", '{"a":[1,{"b":null}]}', "[1,2,3]", '["x"]',
  ...STRANGE_NUMBERS, ...STRANGE_STRINGS,
];

function deepNesting(): string {
  const depth = pick([10, 100, 5000]);
  const open = random() < 0.5 ? "[" : '{"a":';
  const close = open === "[" ? "]" : "}";
  return open.repeat(depth) + "1" + close.repeat(depth);
}

/** Random JSON of bounded depth. */
function randomJson(depth: number): string {
  const roll = int(depth > 3 ? 3 : 6);
  if (roll === 0) return pick(STRANGE_VALUES);
  if (roll === 1) return String(Math.round((random() - 0.5) * 10 ** int(20)));
  if (roll === 2) return JSON.stringify(String.fromCharCode(...Array.from({ length: int(6) }, () => int(0x10000))));
  if (roll === 3) return `[${Array.from({ length: int(4) }, () => randomJson(depth + 1)).join(",")}]`;
  const keys = ["role", "status", "effect", "sequence", "text", "messages", "usage", "state", "created_at",
    "session_settings", "input_answers", "input_choices", "kind", "deadline", "turn_id", "x"];
  return `{${Array.from({ length: int(5) }, () => `"${pick(keys)}":${randomJson(depth + 1)}`).join(",")}}`;
}

/** Offsets of JSON values in `text` (string starts, numbers, literals, containers). */
function valueOffsets(text: string): number[] {
  const offsets: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const prev = text[i - 1];
    if ((prev === ":" || prev === "[" || prev === ",") && c !== "]" && c !== "}") offsets.push(i);
  }
  return offsets;
}

/** The end of the JSON value starting at `start` (exclusive), by bracket and string scanning. */
function valueEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') {
        inString = false;
        if (depth === 0) return i + 1;
      }
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === "," && depth === 0) return i;
  }
  return text.length;
}

function mutate(seed: string): string {
  const offsets = valueOffsets(seed);
  const kind = int(7);
  if (kind === 0 || offsets.length === 0) {
    // Drop one character or a short run.
    const at = int(seed.length);
    return seed.slice(0, at) + seed.slice(at + 1 + (random() < 0.3 ? int(8) : 0));
  }
  const start = pick(offsets);
  const end = valueEnd(seed, start);
  let replacement: string;
  switch (kind) {
    case 1: replacement = pick(STRANGE_NUMBERS); break;
    case 2: replacement = pick(STRANGE_STRINGS); break;
    case 3: replacement = deepNesting(); break;
    case 4: replacement = randomJson(0); break;
    case 5: replacement = pick(STRANGE_VALUES); break;
    default: {
      // Insert a lone surrogate escape inside a string value, if it is one.
      if (seed[start] !== '"') return seed.slice(0, start) + '"\\udc00"' + seed.slice(end);
      return `${seed.slice(0, start + 1)}\\ud800${seed.slice(start + 1)}`;
    }
  }
  return seed.slice(0, start) + replacement + seed.slice(end);
}

interface Seed {
  readonly codec: Codec<Message>;
  readonly text: string;
}

function seeds(): Seed[] {
  const byName = codecs as unknown as Record<string, Codec<Message> | undefined>;
  const found: Seed[] = [];
  try {
    for (const vector of listVectors(testdataDir()).vectors) {
      const codec = byName[vector.message];
      if (vector.category !== "invalid" && codec !== undefined) {
        found.push({ codec, text: readFileSync(vector.file, "utf8") });
      }
    }
  } catch {
    // Without vectors the loop still runs on defaults and random JSON.
  }
  for (const codec of registry) {
    try {
      found.push({ codec, text: codec.encode(codec.decode("{}")) });
    } catch {
      // Defaults holding UNSPECIFIED enums cannot be written; skip those.
    }
  }
  return found;
}

/**
 * A decoded value re-encodes, and the encoding is a fixed point. The one
 * allowed failure: a missing enum key reads as UNSPECIFIED (proto3 zero, as
 * proto/README.md says), which the writer refuses by design.
 */
function checkRoundTrip(codec: Codec<Message>, value: Message, input: string): void {
  let text: string;
  try {
    text = codec.encode(value);
  } catch (error) {
    assert.ok(error instanceof WireFormatError, `${codec.name}: encode threw ${String(error)} for ${input}`);
    assert.equal(error.reason, "unspecified enum value", `${codec.name}: ${error.message} for ${input}`);
    return;
  }
  const again = codec.decode(text);
  assert.equal(codec.encode(again), text, `${codec.name}: not a fixed point for ${input}`);
}

test(`decoders survive random and mutated input (seed ${SEED}, ${ROUNDS} rounds)`, () => {
  const corpus = seeds();
  assert.ok(corpus.length > 0);
  let decoded = 0;
  let rejected = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const seed = pick(corpus);
    let input = random() < 0.1 ? randomJson(0) : mutate(seed.text);
    if (random() < 0.3) input = mutate(input);
    // Mostly the seed's own codec, so mutations hit fields it reads.
    const targets = random() < 0.05 ? registry : [random() < 0.9 ? seed.codec : pick(registry)];
    for (const codec of targets) {
      let value: Message;
      try {
        value = codec.decode(input);
      } catch (error) {
        assert.ok(error instanceof WireFormatError, `${codec.name}: decode threw ${String(error)} for ${input}`);
        assert.ok(error.message.startsWith(`${codec.name}`), error.message);
        rejected++;
        continue;
      }
      decoded++;
      checkRoundTrip(codec, value, input);
    }
  }
  // Both outcomes must be exercised, or the mutations have gone stale.
  assert.ok(decoded > ROUNDS / 20, `only ${decoded} inputs decoded`);
  assert.ok(rejected > ROUNDS / 20, `only ${rejected} inputs rejected`);
});
