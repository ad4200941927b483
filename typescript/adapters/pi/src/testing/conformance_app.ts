/**
 * The pi conformance app: `PiRunner` on pi-ai's faux provider, its answers and
 * its Pi tools the conformance data file's (`ConformanceScript`). The model
 * answers through `answer`: the script in the sidecar (conformance_sidecar.ts),
 * a fixture's model script in run_states.test.ts.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { DeferredToolExecution, DeferredToolOutcome } from "@dex-agents/core";
import type { ConformanceScript, ScriptedAnswer, ScriptedModelCall } from "@dex-agents/core/testing";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  fauxAssistantMessage,
  fauxText,
  fauxThinking,
  fauxToolCall,
  registerFauxProvider,
  Type,
  type AssistantMessage,
  type Context,
  type StreamOptions,
  type TSchema,
} from "@mariozechner/pi-ai";
import { PiRunner } from "../index.js";

function text(content: string | readonly { type: string; text?: string }[]): string {
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");
}

/** A Pi tool sees only its call ID; the run log wants the call's idempotency key. */
const callKey = new AsyncLocalStorage<string>();

class KeyedPiRunner extends PiRunner {
  override executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    return callKey.run(call.idempotencyKey, () => super.executeDeferredToolCall(call));
  }
}

/** The conformance `PiRunner` on a faux provider of its own, whose model answers through `answer`. */
export function conformanceRunner(
  script: ConformanceScript,
  answer: (call: ScriptedModelCall) => Promise<ScriptedAnswer> = (call) => script.answer(call),
): PiRunner {
  /** The scripted model: one factory answers every call. */
  async function respond(context: Context, options: StreamOptions | undefined): Promise<AssistantMessage> {
    const results: { toolCallId: string; toolName: string; output: string }[] = [];
    for (let i = context.messages.length - 1; i >= 0; i--) {
      const m = context.messages[i]!;
      if (m.role !== "toolResult") break;
      results.unshift({ toolCallId: m.toolCallId, toolName: m.toolName, output: text(m.content) });
    }
    if (faux.getPendingResponseCount() < 100) faux.appendResponses(Array.from({ length: 1000 }, () => respond));
    const reply = await answer({
      prompts: context.messages.flatMap((m) => (m.role === "user" ? [text(m.content)] : [])),
      results,
      messageCount: context.messages.length,
      signal: options?.signal,
      tools: (context.tools ?? []).map((t) => t.name),
    });
    if (reply.calls.length > 0) {
      return fauxAssistantMessage(reply.calls.map((c) => fauxToolCall(c.name, c.input, { id: c.id })), { stopReason: "toolUse" });
    }
    if (reply.reasoning !== undefined) return fauxAssistantMessage([fauxThinking(reply.reasoning), fauxText(reply.text ?? "")]);
    return fauxAssistantMessage(reply.text ?? "");
  }

  const faux = registerFauxProvider();
  // Every call takes the same factory; `respond` tops the queue up as it drains.
  faux.setResponses(Array.from({ length: 1000 }, () => respond));

  const tools: AgentTool<TSchema>[] = script.tools.map((t) => ({
    name: t.name,
    label: t.name,
    description: script.description(t.name),
    parameters: Type.Object(
      Object.fromEntries(
        Object.entries(script.parameters(t.name)).map(([k, type]) => [k, type === "number" ? Type.Number() : type === "boolean" ? Type.Boolean() : Type.String()]),
      ),
    ),
    execute: async (_id, params, signal) => {
      const output = await script.runTool(t.name, params as Record<string, unknown>, callKey.getStore(), signal);
      return { content: [{ type: "text", text: output }], details: {} };
    },
  }));
  return new KeyedPiRunner({ model: faux.getModel(), tools, toolPolicies: script.policies() });
}
