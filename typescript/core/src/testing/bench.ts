/**
 * What the adapters' tool-turn bench scripts (`dist/testing/tool_turn_bench.js`,
 * run by python/bench/sidecar_tool_turn.py) share: the `--plain N --warmup W`
 * mode's arguments and its timing loop. Without `--plain` a script serves its
 * runner with `conformanceSidecarArgs` and `serveConformanceRunner`.
 *
 * @module
 */

import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";

export interface PlainBenchArgs {
  readonly turns: number;
  readonly warmup: number;
}

/** `--plain N --warmup W`, or undefined when the script was started to serve. */
export function plainBenchArgs(defaultWarmup: number): PlainBenchArgs | undefined {
  const { values } = parseArgs({
    options: { plain: { type: "string" }, warmup: { type: "string", default: String(defaultWarmup) } },
    strict: false,
  });
  if (typeof values.plain !== "string") return undefined;
  return { turns: Number(values.plain), warmup: Number(values.warmup) };
}

/** Milliseconds of each of `turns` runs after `warmup` unmeasured ones; `before` runs untimed ahead of each. */
export async function timedRuns(
  args: PlainBenchArgs,
  run: () => Promise<void>,
  before: () => void = () => undefined,
): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < args.warmup + args.turns; n++) {
    before();
    const started = performance.now();
    await run();
    if (n >= args.warmup) times.push(performance.now() - started);
  }
  return times;
}
