/**
 * The Claude Agent SDK conformance app: the loopback Messages API answering
 * as the conformance data file's script says (`conformanceRespond`) and
 * `ClaudeAgentRunner` on the real bundled CLI with the file's tools as one
 * in-process MCP server "app" (`conformanceRunner`), shared by the sidecar
 * (conformance_sidecar.ts) and run_states.test.ts, which gives the CLI a
 * fixture's model script instead.
 *
 * @module
 */

import { tool } from "@anthropic-ai/claude-agent-sdk";
import { ToolEffect } from "@dex-agents/contracts";
import type { ConformanceScript } from "@dex-agents/core/testing";
import { z } from "zod";
import { ClaudeAgentRunner, currentToolExecution } from "../index.js";
import { CONTINUE_PROMPT } from "../runner.js";
import { offlineEnv, textReply, toolUseReply, type MessagesRequest, type ScriptedReply } from "./fake_messages.js";
import { owesAnswer, turnResults } from "./script.js";

/** What the CLI calls a tool of the "app" server. */
export const TOOL_PREFIX = "mcp__app__";

/** The descriptions the recorded run states carry (the CLI's transcript lists them). */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  get_weather: "The weather in a city.",
  book_trip: "Books a trip.",
  charge: "Charges the card.",
  charge_now: "Charges the card at once.",
};

/** The script as the loopback Messages API: its calls, its text, or its error as a 500. */
export function conformanceRespond(script: ConformanceScript): (request: MessagesRequest) => Promise<ScriptedReply> {
  return async (request) => {
    const results = owesAnswer(request) ? turnResults(request) : [];
    try {
      const answer = await script.decide({
        prompts: request.userTexts().filter((t) => t !== CONTINUE_PROMPT),
        results: results.map(([toolCallId, toolName, output]) => ({ toolCallId, toolName, output })),
        messageCount: request.messages.length,
      });
      if (answer.calls.length > 0) return toolUseReply(...answer.calls.map((c): [string, string, Record<string, unknown>] => [c.id, `${TOOL_PREFIX}${c.name}`, c.input]));
      return textReply(answer.text ?? "");
    } catch (error) {
      return { blocks: [], errorStatus: 500, errorMessage: error instanceof Error ? error.message : String(error) };
    }
  };
}

/** The conformance `ClaudeAgentRunner`, its CLI's model the Messages API at `baseUrl`. */
export function conformanceRunner(baseUrl: string, script: ConformanceScript): ClaudeAgentRunner {
  const app = script.tools.map((t) =>
    tool(
      t.name,
      DESCRIPTIONS[t.name] ?? script.description(t.name),
      Object.fromEntries(Object.entries(script.parameters(t.name)).map(([k, type]) => [k, type === "number" ? z.number() : type === "boolean" ? z.boolean() : z.string()])),
      async (input: Record<string, unknown>) => ({
        content: [{ type: "text" as const, text: await script.runTool(t.name, input, currentToolExecution()?.idempotencyKey) }],
      }),
      t.effect === ToolEffect.READ ? { annotations: { readOnlyHint: true } } : {},
    ),
  );
  return new ClaudeAgentRunner({
    options: { model: "claude-scripted", tools: [], settingSources: [], maxTurns: 8, env: offlineEnv(baseUrl) },
    tools: { app },
    toolPolicies: script.policies(),
  });
}
