import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonValue } from "@bufbuild/protobuf";
import { decodeRunStateEnvelope } from "@dex-agents/contracts";
import { RunStateError, RunStateFormat } from "./index.js";

const legacyV1 = (state: JsonValue) =>
  typeof state === "object" && state !== null && !Array.isArray(state) && state["version"] === 1
    ? { numbers: state["numbers"] ?? [] }
    : undefined;

const FORMAT = new RunStateFormat({ adapter: "demo", schemaVersion: 2, frameworkVersion: "demo-framework 1.4.0", legacy: legacyV1 });

const numbers = (payload: { readonly [key: string]: JsonValue }): number[] => {
  const value = payload["numbers"];
  if (!Array.isArray(value)) throw new TypeError("numbers must be a list");
  return value.map(Number);
};

test("an envelope round-trips and says who wrote it", () => {
  const text = FORMAT.encode({ numbers: [1, 2] });
  const envelope = decodeRunStateEnvelope(text);
  assert.deepEqual(
    [envelope.adapter, envelope.schemaVersion, envelope.frameworkVersion],
    ["demo", 2, "demo-framework 1.4.0"],
  );
  assert.deepEqual(JSON.parse(envelope.payload), { numbers: [1, 2] });
  assert.deepEqual(FORMAT.decode(text, numbers), [1, 2]);
});

test("another adapter's state names both adapters and both schema versions", () => {
  const other = new RunStateFormat({ adapter: "other", schemaVersion: 7 }).encode({ numbers: [] });
  assert.throws(
    () => FORMAT.decode(other, numbers),
    (error: unknown) =>
      error instanceof RunStateError &&
      error.message.includes("not written by the demo adapter but by other (schema version 7") &&
      error.message.includes("reads schema version 2"),
  );
});

test("a schema version it cannot read names the stored and the supported version", () => {
  const newer = new RunStateFormat({ adapter: "demo", schemaVersion: 3, frameworkVersion: "demo-framework 2.0.0" }).encode({});
  assert.throws(
    () => FORMAT.decode(newer, numbers),
    (error: unknown) =>
      error instanceof RunStateError &&
      error.message.includes("the demo run state has schema version 3 (written with demo-framework 2.0.0)") &&
      error.message.includes("it reads schema version 2"),
  );
});

test("a payload the reader cannot use, or no envelope at all, is a RunStateError", () => {
  assert.throws(() => FORMAT.decode(FORMAT.encode({ numbers: "x" }), numbers), /unreadable demo run state \(schema version 2\)/);
  assert.throws(() => FORMAT.decode("not json", numbers), /not a run state envelope/);
  assert.throws(() => FORMAT.decode('{"version":9}', numbers), /not written by the demo adapter/);
  assert.deepEqual(FORMAT.decode('{"version":1,"numbers":[3]}', numbers), [3]);
});
