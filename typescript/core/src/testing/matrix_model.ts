/**
 * The scripted model of the matrix sidecars, once for every adapter: the tool
 * calls each shared prompt of `dex_agents_testing.matrix` asks for (weather,
 * parallel, book, charge, slow, fail), and the reply to one model call. Each
 * adapter turns its framework's request into a `MatrixModelCall` and the
 * reply into its framework's response.
 *
 * @module
 */

import type { MatrixSidecarArgs } from "./matrix_sidecar.js";
import { noteModelReply } from "./run_state_recorder.js";

export interface MatrixToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** The calls a prompt asks for; `n` (the number of user prompts so far) keeps the IDs unique in a session. */
export function matrixToolCalls(prompt: string, n: number): MatrixToolCall[] {
  const city = (p: string): string => p.split(" ").slice(1).join(" ") || "Paris";
  if (prompt.startsWith("slow")) return [{ id: `w${n}`, name: "get_weather", input: { city: "Paris" } }];
  if (prompt.startsWith("weather in ")) {
    return [{ id: `w${n}`, name: "get_weather", input: { city: prompt.slice("weather in ".length).replace(/\?$/, "") } }];
  }
  if (prompt.startsWith("parallel")) {
    return [
      { id: `a${n}`, name: "get_weather", input: { city: "Oslo" } },
      { id: `b${n}`, name: "get_weather", input: { city: "Lima" } },
    ];
  }
  if (prompt.startsWith("book")) {
    return [
      { id: `r${n}`, name: "get_weather", input: { city: city(prompt) } },
      { id: `k${n}`, name: "book_trip", input: { city: city(prompt) } },
    ];
  }
  if (prompt.startsWith("charge")) return [{ id: `p${n}`, name: "charge", input: { usd: 5 } }];
  if (prompt.startsWith("plan ")) {
    return [{ id: `t${n}`, name: "write_todos", input: { todos: [{ content: `visit ${city(prompt)}`, status: "pending" }] } }];
  }
  if (prompt.startsWith("fail")) return [{ id: `f${n}`, name: "charge_now", input: { usd: 5 } }];
  return [];
}

/** One model call as the script reads it. */
export interface MatrixModelCall {
  /** The user prompts, oldest first. */
  readonly prompts: readonly string[];
  /** The tool results after the last assistant message, in order. */
  readonly results: readonly { readonly toolCallId: string; readonly toolName: string; readonly output: string }[];
  /** The messages the model sees, instructions left out. */
  readonly messageCount: number;
  readonly signal?: AbortSignal | undefined;
}

export interface MatrixReply {
  readonly text?: string;
  readonly calls: readonly MatrixToolCall[];
}

/**
 * Logs the call and answers it: the latest prompt's calls, or after results
 * their summary (held at the `model` gate for "slow", failing for "fail"),
 * else "I have seen N messages.".
 */
export async function matrixReply(sidecar: MatrixSidecarArgs, call: MatrixModelCall): Promise<MatrixReply> {
  const reply = await scriptReply(sidecar, call);
  noteModelReply(reply);
  return reply;
}

async function scriptReply(sidecar: MatrixSidecarArgs, call: MatrixModelCall): Promise<MatrixReply> {
  const { prompts, results } = call;
  sidecar.runLog.write({
    kind: "model",
    name: "model",
    prompts,
    results: Object.fromEntries(results.map((r) => [r.toolCallId, r.output])),
  });
  const current = prompts.at(-1) ?? "";
  if (results.length > 0) {
    if (current.startsWith("slow")) {
      try {
        await sidecar.runLog.waitForGate("model", call.signal);
      } catch (error) {
        // cancel_turn reached the model call's signal through cancellationSignal.
        sidecar.runLog.write({ kind: "model_aborted", name: "model", prompts });
        throw error;
      }
    }
    if (current.startsWith("fail")) throw new Error("model unavailable");
    return { text: `Results: ${results.map((r) => `${r.toolName}=${r.output}`).join("; ")}`, calls: [] };
  }
  const asked = matrixToolCalls(current, prompts.length);
  if (asked.length > 0) return { calls: asked };
  return { text: `I have seen ${call.messageCount} messages.`, calls: [] };
}
