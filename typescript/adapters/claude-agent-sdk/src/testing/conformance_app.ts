/**
 * The Claude Agent SDK matrix app: the matrix script of the loopback Messages
 * API (`matrixRespond`) and `ClaudeAgentRunner` on the real bundled CLI with
 * the matrix's tools (`matrixRunner`), shared by the sidecar
 * (matrix_sidecar.ts) and run_states.test.ts, which gives the CLI a fixture's
 * model script instead.
 *
 * @module
 */

import { tool } from "@anthropic-ai/claude-agent-sdk";
import { ToolEffect } from "@dex-agents/contracts";
import type { RunLog } from "@dex-agents/core/testing";
import { z } from "zod";
import { ClaudeAgentRunner, currentToolExecution } from "../index.js";
import { offlineEnv, textReply, toolUseReply, type MessagesRequest, type ScriptedReply } from "./fake_messages.js";
import { owesAnswer, promptOf, turnResults } from "./script.js";
import { CONTINUE_PROMPT } from "../runner.js";

type Log = Pick<RunLog, "write" | "waitForGate">;

/** The matrix script of the loopback Messages API, logging each call to `runLog`. */
export function matrixRespond(runLog: Log): (request: MessagesRequest) => Promise<ScriptedReply> {
  const log = (entry: Record<string, unknown>): void => runLog.write(entry);
  const gate = (name: string, signal?: AbortSignal): Promise<void> => runLog.waitForGate(name, signal);
  return async (request) => {
    const prompts = request.userTexts().filter((t) => t !== CONTINUE_PROMPT);
    const prompt = promptOf(request);
    const results = owesAnswer(request) ? turnResults(request) : [];
    log({ kind: "model", name: "model", items: request.messages.length, prompts, results: Object.fromEntries(results.map(([id, , text]) => [id, text])) });
    const n = prompts.length;
    if (results.length > 0) {
      if (prompt.startsWith("fail")) return { blocks: [], errorStatus: 500, errorMessage: "model unavailable" };
      if (prompt.startsWith("slow")) await gate("model");
      return textReply(`Results: ${results.map(([, name, text]) => `${name}=${text}`).join("; ")}`);
    }
    if (prompt.startsWith("weather") || prompt.startsWith("slow")) return toolUseReply([`w${n}`, "mcp__app__get_weather", { city: "Paris" }]);
    if (prompt.startsWith("parallel")) {
      return toolUseReply([`a${n}`, "mcp__app__get_weather", { city: "Oslo" }], [`b${n}`, "mcp__app__get_weather", { city: "Lima" }]);
    }
    if (prompt.startsWith("book")) {
      return toolUseReply([`r${n}`, "mcp__app__get_weather", { city: "Rome" }], [`k${n}`, "mcp__app__book_trip", { city: "Rome" }]);
    }
    if (prompt.startsWith("two bookings")) {
      return toolUseReply([`k${n}`, "mcp__app__book_trip", { city: "Rome" }], [`q${n}`, "mcp__app__book_trip", { city: "Oslo" }]);
    }
    if (prompt.startsWith("charge")) return toolUseReply([`p${n}`, "mcp__app__charge", { usd: 5 }]);
    if (prompt.startsWith("fail")) return toolUseReply([`f${n}`, "mcp__app__charge_now", { usd: 5 }]);
    return textReply(`I have seen ${request.messages.length} messages.`);
  };
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
const noApprovalWrite = { effect: ToolEffect.NON_IDEMPOTENT_WRITE, requiresApproval: false };

/** The matrix's `ClaudeAgentRunner`, its CLI's model the Messages API at `baseUrl`; its tools log to `runLog`. */
export function matrixRunner(baseUrl: string, runLog: Log): ClaudeAgentRunner {
  const logged = (name: string): void =>
    runLog.write({ kind: "tool", name, key: currentToolExecution()?.idempotencyKey ?? null });
  const gate = (name: string): Promise<void> => runLog.waitForGate(name);
  return new ClaudeAgentRunner({
    options: { model: "claude-scripted", tools: [], settingSources: [], maxTurns: 8, env: offlineEnv(baseUrl) },
    tools: {
      app: [
        tool("get_weather", "The weather in a city.", { city: z.string() }, async ({ city }) => {
          logged("get_weather");
          return text(`sunny in ${city}`);
        }, { annotations: { readOnlyHint: true } }),
        tool("book_trip", "Books a trip.", { city: z.string() }, async ({ city }) => {
          logged("book_trip");
          return text(`booked ${city}`);
        }),
        tool("charge", "Charges the card.", { usd: z.number() }, async ({ usd }) => {
          logged("charge");
          await gate("charge");
          return text(`charged ${usd} USD`);
        }),
        tool("charge_now", "Charges the card at once.", { usd: z.number() }, async ({ usd }) => {
          logged("charge_now");
          return text(`charged ${usd} USD`);
        }),
      ],
    },
    toolPolicies: {
      book_trip: { effect: ToolEffect.NON_IDEMPOTENT_WRITE },
      charge: noApprovalWrite,
      charge_now: noApprovalWrite,
    },
  });
}
