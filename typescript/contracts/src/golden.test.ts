// Golden wire vectors (proto/testdata): the same files the Python codec tests
// read, so both languages agree byte for byte.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import type { DescEnum, DescMessage, Message } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";

import type { Codec } from "./index.js";
import { codecs, file_dex_agents_v1_enums, WireFormatError } from "./index.js";
import { listVectors, readErrorText, testdataDir } from "./testdata.js";

const root = testdataDir();
const { vectors, problems } = listVectors(root);
// Type-erased view of the registry: the tests call every codec alike.
const registry = codecs as unknown as Record<string, Codec<Message>>;

function codecOf(message: string): Codec<Message> {
  const codec = registry[message];
  assert.ok(codec !== undefined, `no codec for directory ${message}`);
  return codec;
}

/** Collects `enum type name -> numbers` of every enum value set in `value`. */
function collectEnums(schema: DescMessage, value: unknown, seen: Map<string, Set<number>>): void {
  const record = value as Record<string, unknown>;
  const note = (desc: DescEnum, number: unknown): void => {
    if (typeof number !== "number") return;
    let set = seen.get(desc.typeName);
    if (set === undefined) seen.set(desc.typeName, (set = new Set()));
    set.add(number);
  };
  for (const field of schema.fields) {
    const item = record[field.localName];
    if (item === undefined) continue;
    if (field.fieldKind === "enum") note(field.enum, item);
    if (field.fieldKind === "message") collectEnums(field.message, item, seen);
    if (field.fieldKind === "list" && field.listKind === "enum") {
      for (const entry of item as unknown[]) note(field.enum, entry);
    }
    if (field.fieldKind === "list" && field.listKind === "message") {
      for (const entry of item as unknown[]) collectEnums(field.message, entry, seen);
    }
  }
}

describe("golden vectors", () => {
  test(`are found (${root})`, () => {
    assert.ok(vectors.length > 0, `no vectors under ${root}`);
  });

  test("follow the directory layout", () => {
    assert.deepEqual(problems, []);
  });

  test("cover every message type of the registry with a valid/ file", () => {
    const covered = new Set(vectors.filter((v) => v.category === "valid").map((v) => v.message));
    const missing = Object.keys(codecs).filter((name) => !covered.has(name));
    assert.deepEqual(missing, [], `message types without valid/ vectors: ${missing.join(", ")}`);
  });

  test("name only message types of the registry", () => {
    const unknown = [...new Set(vectors.map((v) => v.message))].filter((m) => !(m in codecs));
    assert.deepEqual(unknown, []);
  });

  test("use every enum value in a valid/ file", () => {
    const seen = new Map<string, Set<number>>();
    for (const vector of vectors.filter((v) => v.category === "valid")) {
      const codec = codecOf(vector.message);
      collectEnums(codec.schema, codec.decode(readFileSync(vector.file)), seen);
    }
    const missing: string[] = [];
    for (const desc of file_dex_agents_v1_enums.enums) {
      for (const value of desc.values) {
        if (value.number !== 0 && !seen.get(desc.typeName)?.has(value.number)) missing.push(value.name);
      }
    }
    assert.deepEqual(missing, [], `enum values without a valid/ vector: ${missing.join(", ")}`);
  });

  for (const vector of vectors) {
    const label = `${vector.category}/${vector.message}/${vector.name}`;
    test(label, () => {
      const codec = codecOf(vector.message);
      const bytes = readFileSync(vector.file);
      if (vector.category === "invalid") {
        const expected = readErrorText(vector.expectedFile as string);
        // Bytes first (a vector may hold invalid UTF-8), then text when it is text.
        assert.throws(
          () => codec.decode(bytes),
          (error: unknown) => error instanceof WireFormatError && error.message === expected,
          `expected: ${expected}`,
        );
        return;
      }
      const expected = vector.category === "valid" ? bytes : readFileSync(vector.expectedFile as string);
      const fromBytes = codec.decode(bytes);
      const fromText = codec.decode(bytes.toString("utf8"));
      const encoded = codec.encode(fromBytes);
      assert.equal(encoded, expected.toString("utf8"));
      assert.ok(Buffer.from(encoded, "utf8").equals(expected), "bytes differ");
      assert.equal(codec.encode(fromText), encoded);
      // The decoded object is a well-formed protobuf-es message: it survives
      // the binary codec of protobuf-es unchanged.
      const again = fromBinary(codec.schema, toBinary(codec.schema, fromBytes));
      assert.equal(codec.encode(again), encoded);
    });
  }
});
