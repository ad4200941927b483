/**
 * The tool turn of `python/bench/openai_agents_tool_turn.py`, in Node:
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

import { ToolEffect } from "@dex-agents/contracts";
import { conformanceSidecarArgs, plainBenchArgs, serveConformanceRunner, timedRuns } from "@dex-agents/core/testing";
import { Agent, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults } from "./scripted_model.js";

const QUESTION = "What is the value of x?";
const ANSWER = "x is 42.";

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

// The recorded requests would grow for the whole run; the bench reads none.
const forgetRequests = (): void => void (model.requests.length = 0);
const plainArgs = plainBenchArgs(10);
if (plainArgs !== undefined) {
  const runner = new Runner({ tracingDisabled: true });
  const times = await timedRuns(plainArgs, async () => {
    const result = await runner.run(agent, QUESTION);
    if (result.finalOutput !== ANSWER) throw new Error(`the plain run ended with ${JSON.stringify(result.finalOutput)}`);
  }, forgetRequests);
  process.stdout.write(`${JSON.stringify({ times_ms: times })}\n`);
} else {
  const runner = new OpenAiAgentsRunner({ agent, toolPolicies: { lookup: { effect: ToolEffect.READ } } });
  forgetRequests();
  setInterval(forgetRequests, 1000).unref();
  await serveConformanceRunner(conformanceSidecarArgs(), runner);
}
