/**
 * The tool turn of `python/core/bench/openai_agents_tool_turn.py`, in Node:
 * "What is the value of x?" -> a `lookup` call -> "x is 42.", with a
 * `ScriptedModel`.
 *
 * `--plain N --warmup W` runs it N + W times plainly with `Runner.run` (the
 * tool runs in-process) and prints `{"times_ms": [...]}` for the N measured
 * runs. `--address A --log PATH --flow-type T` (the `Sidecar` arguments)
 * serves `OpenAiAgentsRunner` on the same agent instead.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { ToolEffect } from "@dex-agents/contracts";
import { serveRunners } from "@dex-agents/core";
import { Agent, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults } from "./scripted_model.js";

const QUESTION = "What is the value of x?";
const ANSWER = "x is 42.";

const { values } = parseArgs({
  options: {
    plain: { type: "string" },
    warmup: { type: "string", default: "10" },
    address: { type: "string", default: "127.0.0.1:0" },
    log: { type: "string" },
    "flow-type": { type: "string" },
  },
});

let calls = 0;
const model = new ScriptedModel((request) => {
  if (trailingResults(request).size > 0) return { text: ANSWER };
  calls += 1;
  return { calls: [{ callId: `l${calls}`, name: "lookup", arguments: { key: "x" } }] };
});
const lookup = tool({
  name: "lookup",
  description: "Looks a value up",
  parameters: z.object({ key: z.string() }),
  execute: async () => "42",
});
const agent = new Agent({ name: "bench", instructions: "Look values up.", model, tools: [lookup] });

if (values.plain !== undefined) {
  const runner = new Runner({ tracingDisabled: true });
  const turns = Number(values.plain);
  const warmup = Number(values.warmup);
  const times: number[] = [];
  for (let n = 0; n < warmup + turns; n++) {
    model.requests.length = 0; // keep the recorded requests from growing
    const started = performance.now();
    const result = await runner.run(agent, QUESTION);
    const elapsed = performance.now() - started;
    if (result.finalOutput !== ANSWER) throw new Error(`the plain run ended with ${JSON.stringify(result.finalOutput)}`);
    if (n >= warmup) times.push(elapsed);
  }
  process.stdout.write(`${JSON.stringify({ times_ms: times })}\n`);
} else {
  const flowType = values["flow-type"];
  if (flowType === undefined) throw new Error("say --flow-type T (or --plain N)");
  const runner = new OpenAiAgentsRunner({ agent, toolPolicies: { lookup: { effect: ToolEffect.READ } } });
  model.requests.length = 0;
  const server = await serveRunners({ runners: { [flowType]: runner }, address: values.address });
  // The recorded requests would grow for the whole run; the bench reads none.
  setInterval(() => (model.requests.length = 0), 1000).unref();
  process.stdout.write(`listening ${server.address}\n`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
}
