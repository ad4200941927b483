/**
 * Test support shared by the unit and live tests (not exported by the package):
 * the AI SDK's own parser and reducer over a UI message stream, and a plain
 * JSON form of messages for deep equality.
 *
 * @module
 */

import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

import { parseJsonEventStream, readUIMessageStream, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai";

/** proto/testdata: DEX_TESTDATA_DIR (Bazel), else found above the working directory. */
export function testdataDir(): string {
  const configured = process.env["DEX_TESTDATA_DIR"];
  if (configured) return configured;
  for (let dir = resolve("."); ; dir = resolve(dir, "..")) {
    const candidate = join(dir, "proto", "testdata");
    if (existsSync(candidate)) return candidate;
    if (dir === resolve(dir, "..")) throw new Error("proto/testdata not found; set DEX_TESTDATA_DIR");
  }
}

/** Chunks of an SSE body, parsed and validated by `ai`'s parseJsonEventStream. */
export async function parsedChunks(body: ReadableStream<Uint8Array>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const result of parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema })) {
    if (!result.success) throw result.error;
    chunks.push(result.value);
  }
  return chunks;
}

/** The message `ai`'s readUIMessageStream folds `chunks` into (continuing `message` if given). */
export async function foldChunks<M extends UIMessage>(chunks: readonly UIMessageChunk[], message?: M): Promise<M> {
  let last: M | undefined;
  const stream = ReadableStream.from(chunks);
  for await (const folded of readUIMessageStream<M>({
    stream,
    terminateOnError: true,
    ...(message ? { message: structuredClone(message) } : {}),
  })) {
    last = folded;
  }
  if (last === undefined) throw new Error("the chunks made no message");
  return last;
}

/** A message as JSON would carry it (undefined fields gone); `usage` metadata dropped. */
export function plain(message: UIMessage): unknown {
  const value = JSON.parse(JSON.stringify(message)) as { metadata?: Record<string, unknown> };
  if (value.metadata) delete value.metadata["usage"];
  return value;
}
