/**
 * The pi matrix app: `PiRunner` on pi-ai's faux provider with the matrix's
 * tools (get_weather, book_trip with approval, charge_now, charge held by
 * its gate). Its model answers through `reply`: the shared matrix script in
 * the sidecar (matrix_sidecar.ts), a fixture's model script in
 * run_states.test.ts.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { ToolEffect } from "@dex-agents/contracts";
import type { DeferredToolExecution, DeferredToolOutcome } from "@dex-agents/core";
import type { MatrixModelCall, MatrixReply } from "@dex-agents/core/testing";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import {
  fauxAssistantMessage,
  fauxToolCall,
  registerFauxProvider,
  Type,
  type AssistantMessage,
  type Context,
  type StreamOptions,
} from "@mariozechner/pi-ai";
import { PiRunner } from "../index.js";

function text(content: string | readonly { type: string; text?: string }[]): string {
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? (p.text ?? "") : "")).join("");
}

/** A Pi tool sees only its call ID; the run log wants the call's idempotency key. */
const callKey = new AsyncLocalStorage<string>();

const city = Type.Object({ city: Type.String() });
const usd = Type.Object({ usd: Type.Number() });
function tool<S extends typeof city | typeof usd>(
  name: string,
  description: string,
  parameters: S,
  run: (params: Record<string, unknown>, signal: AbortSignal | undefined) => Promise<string>,
): AgentTool<S> {
  return {
    name,
    label: name,
    description,
    parameters,
    execute: async (_id, params, signal) => {
      return { content: [{ type: "text", text: await run(params as Record<string, unknown>, signal) }], details: {} };
    },
  };
}

class LoggedPiRunner extends PiRunner {
  override executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    return callKey.run(call.idempotencyKey, () => super.executeDeferredToolCall(call));
  }
}

/** What the app's model and tools report to, and how its model answers. */
export interface MatrixApp {
  readonly reply: (call: MatrixModelCall) => Promise<MatrixReply>;
  readonly log: (entry: Record<string, unknown>) => void;
  readonly gate: (name: string, signal?: AbortSignal) => Promise<void>;
}

/** The matrix's `PiRunner` on a faux provider of its own, whose model answers through `app.reply`. */
export function matrixRunner(app: MatrixApp): PiRunner {
  const { log, gate } = app;
  /** The scripted model: one factory answers every call, by the latest user prompt. */
  async function answer(context: Context, options: StreamOptions | undefined): Promise<AssistantMessage> {
    const results: { toolCallId: string; toolName: string; output: string }[] = [];
    for (let i = context.messages.length - 1; i >= 0; i--) {
      const m = context.messages[i]!;
      if (m.role !== "toolResult") break;
      results.unshift({ toolCallId: m.toolCallId, toolName: m.toolName, output: text(m.content) });
    }
    if (faux.getPendingResponseCount() < 100) faux.appendResponses(Array.from({ length: 1000 }, () => answer));
    const reply = await app.reply({
      prompts: context.messages.flatMap((m) => (m.role === "user" ? [text(m.content)] : [])),
      results,
      messageCount: context.messages.length,
      signal: options?.signal,
    });
    if (reply.calls.length > 0) {
      return fauxAssistantMessage(reply.calls.map((c) => fauxToolCall(c.name, c.input, { id: c.id })), { stopReason: "toolUse" });
    }
    return fauxAssistantMessage(reply.text ?? "");
  }

  const faux = registerFauxProvider();
  // Every call takes the same factory; `answer` tops the queue up as it drains.
  faux.setResponses(Array.from({ length: 1000 }, () => answer));

  return new LoggedPiRunner({
    model: faux.getModel(),
    tools: [
      tool("get_weather", "The weather in a city", city, async (p) => {
        log({ kind: "tool", name: "get_weather", key: callKey.getStore() });
        return `sunny in ${String(p["city"])}`;
      }),
      tool("book_trip", "Books a trip to a city", city, async (p) => {
        log({ kind: "tool", name: "book_trip", key: callKey.getStore() });
        return `booked ${String(p["city"])}`;
      }),
      tool("charge_now", "Charges the card at once", usd, async (p) => {
        log({ kind: "tool", name: "charge_now", key: callKey.getStore() });
        return `charged ${String(p["usd"])} USD`;
      }),
      tool("charge", "Charges the card", usd, async (p, signal) => {
        log({ kind: "tool", name: "charge", key: callKey.getStore() });
        await gate("charge", signal);
        return `charged ${String(p["usd"])} USD`;
      }),
    ],
    toolPolicies: {
      get_weather: { effect: ToolEffect.READ },
      book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: true },
      charge_now: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
      charge: { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false },
    },
  });
}
