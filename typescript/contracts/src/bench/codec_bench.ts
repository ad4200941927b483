// Benchmark: encode + decode of the generated wire codecs against
// @bufbuild/protobuf's reflection-based toJsonString/fromJsonString on the
// same values, in the same process.
//
//   node dist/bench/codec_bench.js [--seconds=1] [--check]
//
// `--check` exits with status 1 when a type's ratio is below 2x (the target
// of the codec design). Not part of the published package.

import { fromJsonString, toJsonString, type DescMessage, type Message } from "@bufbuild/protobuf";

import { AgentMessageSchema, AgentSnapshotSchema, AgentToolCallSchema, codecs, type Codec } from "../index.js";
import { message, snapshot, toolCall } from "./values.js";

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, "").split("=", 2);
    return [key as string, value ?? "true"] as const;
  }),
);
const SECONDS = Number(args.get("seconds") ?? 1);
const CHECK = args.has("check");

/** Runs `op` for about `seconds` and returns operations per second. */
function measure(op: () => void, seconds: number): number {
  let count = 0;
  let batch = 1;
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  let elapsed = 0n;
  while (elapsed < budget) {
    for (let i = 0; i < batch; i++) op();
    count += batch;
    elapsed = process.hrtime.bigint() - start;
    if (elapsed < budget / 20n) batch *= 2;
  }
  return count / (Number(elapsed) / 1e9);
}

function bench<T extends Message>(name: string, schema: DescMessage, codec: Codec<T>, value: T): number {
  const writeOptions = { alwaysEmitImplicit: true, useProtoFieldName: true };
  const ours = (): void => {
    codec.decode(codec.encode(value));
  };
  const theirs = (): void => {
    fromJsonString(schema, toJsonString(schema, value, writeOptions));
  };
  measure(ours, SECONDS / 2);
  measure(theirs, SECONDS / 2);
  let best = 0;
  let bestTheirs = 0;
  for (let round = 0; round < 3; round++) {
    best = Math.max(best, measure(ours, SECONDS));
    bestTheirs = Math.max(bestTheirs, measure(theirs, SECONDS));
  }
  const ratio = best / bestTheirs;
  const size = codec.encode(value).length;
  const fmt = (n: number): string => Math.round(n).toLocaleString("en-US").padStart(9);
  console.log(
    `${name.padEnd(14)} ${String(size).padStart(7)} chars  dexcodec ${fmt(best)} ops/s  ` +
      `protobuf-es ${fmt(bestTheirs)} ops/s  ratio ${ratio.toFixed(2)}x`,
  );
  return ratio;
}

console.log(`node ${process.version}; encode+decode per op; best of 3 runs of ${SECONDS}s after warm-up`);
const ratios = [
  bench("AgentToolCall", AgentToolCallSchema, codecs.AgentToolCall, toolCall(1)),
  bench("AgentMessage", AgentMessageSchema, codecs.AgentMessage, message(1)),
  bench("AgentSnapshot", AgentSnapshotSchema, codecs.AgentSnapshot, snapshot()),
];
if (CHECK && ratios.some((ratio) => ratio < 2)) {
  console.error("a ratio is below the 2x target");
  process.exitCode = 1;
}
