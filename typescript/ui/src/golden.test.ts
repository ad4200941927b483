/** The shared golden vectors of proto/testdata/ui-stream, read by the TypeScript side. */

import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { decodeAgentEvent, decodeAgentSnapshot, encodeAgentEvent } from "@dex-agents/contracts";
import { asSchema, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai";

import { convertAgentSnapshotToUIMessages } from "./messages.js";
import { readSse } from "./sse.js";
import { foldChunks, plain, testdataDir } from "./testing.js";
import { decodeUiStreamToken, encodeUiStreamToken } from "./token.js";

const root = join(testdataDir(), "ui-stream");
const cases = readdirSync(root).filter((name) => statSync(join(root, name)).isDirectory()).sort();

function chunksOf(name: string): UIMessageChunk[] {
  const text = readFileSync(join(root, name, "chunks.jsonl"), "utf8");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as UIMessageChunk);
}

test("the golden cases are there", () => {
  assert.deepEqual(cases, ["approval-continued", "approval-requested", "retried-step", "steered-turn", "tool-turn"]);
});

for (const name of cases) {
  test(`${name}: events.sse reads as AgentEvents whose wire JSON is the data`, async () => {
    const bytes = readFileSync(join(root, name, "events.sse"));
    const body = ReadableStream.from([new Uint8Array(bytes)]);
    const ids: string[] = [];
    for await (const message of readSse(body)) {
      const event = decodeAgentEvent(message.data);
      assert.equal(encodeAgentEvent(event), message.data);
      assert.ok(message.id !== undefined);
      ids.push(message.id);
    }
    assert.ok(ids.length > 0);
    assert.equal(new Set(ids).size, ids.length);
  });

  test(`${name}: every chunk passes ai's uiMessageChunkSchema`, async () => {
    const schema = asSchema(uiMessageChunkSchema);
    for (const chunk of chunksOf(name)) {
      const result = await schema.validate!(chunk);
      assert.ok(result.success, `${JSON.stringify(chunk)}: ${result.success ? "" : String(result.error)}`);
    }
  });
}

test("tool-turn folds through ai's reducer into a two-step message", async () => {
  const message = await foldChunks<UIMessage>(chunksOf("tool-turn"));
  assert.equal(message.id, "msg_turn-1");
  const kinds = message.parts.map((p) => p.type);
  assert.equal(kinds.filter((k) => k === "step-start").length, 2);
  const tool = message.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(tool && tool.type === "dynamic-tool");
  assert.equal(tool.state, "output-available");
});

test("retried-step keeps only the second attempt's text", async () => {
  const chunks = chunksOf("retried-step");
  assert.ok(chunks.some((c) => c.type === "reset-step"));
  const message = await foldChunks<UIMessage>(chunks);
  const texts = message.parts.filter((p) => p.type === "text").map((p) => (p.type === "text" ? p.text : ""));
  assert.equal(texts.length, 1);
  const dropped = chunks
    .slice(0, chunks.findIndex((c) => c.type === "reset-step"))
    .filter((c) => c.type === "text-delta")
    .map((c) => (c.type === "text-delta" ? c.delta : ""))
    .join("");
  assert.notEqual(texts[0], dropped);
});

test("approval-requested then approval-continued: one message, approved, with the output", async () => {
  const asked = await foldChunks<UIMessage>(chunksOf("approval-requested"));
  const waiting = asked.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(waiting && waiting.type === "dynamic-tool");
  assert.equal(waiting.state, "approval-requested");
  assert.equal(waiting.approval?.id, "call-1");
  const done = await foldChunks(chunksOf("approval-continued"), asked);
  assert.equal(done.id, asked.id);
  const tool = done.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(tool && tool.type === "dynamic-tool");
  assert.equal(tool.state, "output-available");
  assert.equal(tool.output, "deployed to prod");
  assert.equal(tool.approval?.approved, true);
});

test("steered-turn folds into the message convertAgentSnapshotToUIMessages makes of its stored messages", async () => {
  const folded = await foldChunks<UIMessage>(chunksOf("steered-turn"));
  const stored = decodeAgentSnapshot(
    JSON.stringify({
      messages: [
        { sequence: 1, turn_id: "turn-1", role: "user", text: "hold:g1" },
        { sequence: 2, turn_id: "turn-1", role: "assistant", tool_call_id: "call-1", tool_name: "hold", tool_arguments: '{"gate":"g1"}' },
        { sequence: 3, turn_id: "turn-1", role: "tool", tool_call_id: "call-1", tool_name: "hold", tool_output: "held" },
        { sequence: 4, turn_id: "turn-2", role: "user", text: "go left" },
        { sequence: 5, turn_id: "turn-2", role: "user", text: "and say so" },
        { sequence: 6, turn_id: "turn-2", role: "assistant", text: "ok going left" },
      ],
    }),
  );
  const [, converted] = convertAgentSnapshotToUIMessages(stored, { steeredTurns: ["turn-2"] });
  assert.deepEqual(plain(folded), plain(converted!));
  assert.deepEqual(
    folded.parts.map((p) => p.type),
    ["step-start", "dynamic-tool", "steering-message", "steering-message", "step-start", "text"],
  );
});

test("tokens.json: encode gives the text, decode gives the fields", () => {
  const cases = JSON.parse(readFileSync(join(root, "tokens.json"), "utf8")) as {
    session_id: string;
    turn_id: string;
    start: string;
    position: string;
    chunk: number;
    open_parts: string[];
    encoded: string;
  }[];
  assert.ok(cases.length >= 3);
  for (const c of cases) {
    const token = {
      sessionId: c.session_id,
      turnId: c.turn_id,
      start: c.start,
      position: c.position,
      chunk: c.chunk,
      openParts: c.open_parts,
    };
    assert.equal(encodeUiStreamToken(token), c.encoded);
    assert.deepEqual(decodeUiStreamToken(c.encoded), token);
  }
});

test("bad tokens are refused naming the problem", () => {
  assert.throws(() => decodeUiStreamToken("x1.abc"), /does not start with "u1\."/);
  assert.throws(() => decodeUiStreamToken("u1.!!"), /is malformed/);
  const wrong = "u1." + Buffer.from(JSON.stringify(["s", "t", "", "1", -1, []])).toString("base64url");
  assert.throws(() => decodeUiStreamToken(wrong), /is malformed/);
});
