/**
 * The OpenAI Agents conformance app: `OpenAiAgentsRunner` over an agent whose
 * tools and `ScriptedModel` answers are the conformance data file's
 * (`ConformanceScript`), with a handoff to a "forecaster" agent, one
 * `ScriptedModel` for both. The model answers through `answer`: the script in
 * the sidecar (conformance_sidecar.ts), a fixture's model script in
 * run_states.test.ts. "forecast CITY" (this app's own prompt, for the
 * after_handoff run state) hands off: the first agent calls
 * transfer_to_forecaster, the forecaster calls get_weather and answers the
 * results through `answer`, its text marked "forecaster: ", so a resumed run
 * shows which agent answered. The first agent keeps the name "matrix" its
 * recorded run states carry. "refund ORDER" (the suite's handoff case, as the
 * Python app answers it) hands off to "billing", whose refund tool answers
 * "Billing: refunded ORDER". With `structured` the first agent's `outputType`
 * is the data file's output (the SDK fixes one per agent: the sidecar's
 * `build_structured_flow`), and a scripted output is the answer's JSON text.
 *
 * @module
 */

import { noteModelReply, type ConformanceScript, type ScriptedAnswer, type ScriptedModelCall } from "@dex-agents/core/testing";
import { ToolEffect } from "@dex-agents/contracts";
import { Agent, handoff, tool, type ModelRequest, type Tool } from "@openai/agents";
import { z } from "zod";
import { dexRunInfo, OpenAiAgentsRunner } from "../index.js";
import { ScriptedModel, trailingResults, userTexts, type ScriptedReply } from "./scripted_model.js";

const FIRST = "Answer with the tools.";
const FORECASTER = "Forecast with get_weather.";
const BILLING = "Refund with the refund tool.";

function key(): string | undefined {
  return dexRunInfo()?.idempotencyKey;
}

/** The conformance `OpenAiAgentsRunner`: the data file's tools and model answers (through `answer`). */
export function conformanceRunner(
  script: ConformanceScript,
  answer: (call: ScriptedModelCall) => Promise<ScriptedAnswer> = (call) => script.answer(call),
  { structured = false }: { readonly structured?: boolean } = {},
): OpenAiAgentsRunner {
  /** The handoffs' own moves, outside the data file's script; undefined when the script answers. */
  function handoffMove(request: ModelRequest, prompts: readonly string[], answered: boolean): ScriptedReply | undefined {
    const prompt = prompts.at(-1) ?? "";
    const n = prompts.length;
    if (prompt.startsWith("refund ")) return refundMove(request, prompt.slice("refund ".length).split(" ").at(-1) ?? "", n);
    if (!prompt.startsWith("forecast ") || answered) return undefined;
    if (request.systemInstructions === FIRST) return { calls: [{ callId: `h${n}`, name: "transfer_to_forecaster", arguments: {} }] };
    return { calls: [{ callId: `w${n}`, name: "get_weather", arguments: { city: prompt.slice("forecast ".length) } }] };
  }

  /** "refund order ORDER": hand off to billing, which refunds, then says what it did. */
  function refundMove(request: ModelRequest, order: string, n: number): ScriptedReply {
    if (request.systemInstructions !== BILLING) return { calls: [{ callId: `h${n}`, name: "transfer_to_billing", arguments: {} }] };
    const refunded = [...trailingResults(request).values()].find((r) => r.name === "refund");
    if (refunded !== undefined) return { text: `Billing: ${refunded.text}` };
    return { calls: [{ callId: `f${n}`, name: "refund", arguments: { order } }] };
  }

  const model = new ScriptedModel(async (request) => {
    const trailing = trailingResults(request);
    const prompts = userTexts(request);
    const results = [...trailing].map(([toolCallId, r]) => ({ toolCallId, toolName: r.name, output: r.text }));
    // The forecaster's first call sees the handoff's own result, which it does not answer.
    const move = handoffMove(request, prompts, results.some((r) => !r.toolName.startsWith("transfer_to_")));
    if (move !== undefined) {
      script.logModel({ prompts, results, messageCount: typeof request.input === "string" ? 1 : request.input.length });
      noteModelReply(move);
      return move;
    }
    const answered = await answer({
      prompts,
      results,
      messageCount: typeof request.input === "string" ? 1 : request.input.length,
      signal: request.signal,
    });
    const said = answered.output !== undefined ? JSON.stringify(answered.output) : answered.text;
    const text = said !== undefined && request.systemInstructions === FORECASTER ? `forecaster: ${said}` : said;
    return {
      ...(text !== undefined ? { text } : {}),
      calls: answered.calls.map((c) => ({ callId: c.id, name: c.name, arguments: c.input })),
    };
  });

  const tools: Tool[] = script.tools.map((t) =>
    tool({
      name: t.name,
      description: script.description(t.name),
      parameters: z.object(
        Object.fromEntries(Object.entries(script.parameters(t.name)).map(([k, type]) => [k, type === "number" ? z.number() : type === "boolean" ? z.boolean() : z.string()])),
      ),
      ...(t.requiresApproval === true ? { needsApproval: true } : {}),
      execute: (input, _context, details) => script.runTool(t.name, input as Record<string, unknown>, key(), details?.signal),
    }),
  );
  const getWeather = tools.find((t) => t.name === "get_weather");
  const forecaster = new Agent({ name: "forecaster", instructions: FORECASTER, model, tools: getWeather === undefined ? [] : [getWeather] });
  const refund = tool({
    name: "refund",
    description: "Refunds an order",
    parameters: z.object({ order: z.string() }),
    execute: ({ order }) => {
      script.logTool("refund", key());
      return `refunded ${order}`;
    },
  });
  const billing = new Agent({ name: "billing", instructions: BILLING, model, tools: [refund] });
  const handoffs = [handoff(forecaster), handoff(billing)];
  const agent = structured
    ? new Agent<unknown, ReturnType<typeof outputSchema>>({ name: "matrix", instructions: FIRST, model, handoffs, tools, outputType: outputSchema(script) })
    : new Agent({ name: "matrix", instructions: FIRST, model, handoffs, tools });

  return new OpenAiAgentsRunner({ agent, toolPolicies: { ...script.policies(), refund: { effect: ToolEffect.IDEMPOTENT_WRITE } } });
}

/** The data file's output as a zod object (its fields are strings). */
function outputSchema(script: ConformanceScript): z.ZodObject<Record<string, z.ZodString>> {
  return z.object(Object.fromEntries(Object.keys(script.data.output.fields).map((name) => [name, z.string()])));
}
