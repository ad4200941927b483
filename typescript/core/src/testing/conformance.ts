/**
 * The conformance data file (`proto/testdata/conformance/cases.json`) as a
 * TypeScript app factory needs it: the scripted model's answer to a call and
 * the tools' bodies, with their gates and their run log. The counterpart of
 * `dex_agents_testing.conformance.ScriptedApp`; the Python runner reads the
 * file's `cases` and drives them through the sidecar, so this module reads
 * only the `model`, `output` and `tools` sections, and each adapter maps
 * `ConformanceScript.answer` onto its framework's fake model.
 *
 * @module
 */

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolEffect } from "@dex-agents/contracts";
import type { ToolPolicy } from "../runner.js";
import { noteModelReply } from "./run_state_recorder.js";
import type { RunLog } from "./runlog.js";

/** A tool call the scripted model makes. */
export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
}

/** One model call as the script reads it. */
export interface ScriptedModelCall {
  /** The user prompts, oldest first. */
  readonly prompts: readonly string[];
  /** The tool results after the last assistant message, in order. */
  readonly results: readonly { readonly toolCallId: string; readonly toolName: string; readonly output: string }[];
  /** The messages the model sees, instructions left out. */
  readonly messageCount: number;
  readonly signal?: AbortSignal | undefined;
  /** The output validator asked for a retry (the structured-output reply's second answer). */
  readonly retried?: boolean | undefined;
  /** The names of the tools the model is offered (logged as `tools`, for `last_model_tools`). */
  readonly tools?: readonly string[] | undefined;
}

/**
 * One model response: text, tool calls (ids numbered), or a structured output;
 * `reasoning` comes before the text where the data file's reply reasons.
 */
export interface ScriptedAnswer {
  readonly text?: string;
  readonly calls: readonly ScriptedToolCall[];
  readonly output?: Record<string, unknown>;
  readonly reasoning?: string;
}

/** What the scripted model answers to a user prompt that starts with `prompt`. */
export interface ConformanceReply {
  readonly prompt: string;
  readonly calls: readonly ScriptedToolCall[];
  readonly output?: Record<string, unknown> | undefined;
  readonly retriedOutput?: Record<string, unknown> | undefined;
  /** Once tool results are in, the call waits for this gate (a kill test's target). */
  readonly gate?: string | undefined;
  /** Once tool results are in, every call fails with this message. */
  readonly error?: string | undefined;
  /** What the model thinks before its text answer (the reasoning_deltas case). */
  readonly reasoning?: string | undefined;
}

export interface ConformanceTool {
  readonly name: string;
  readonly effect: ToolEffect;
  /** The output, `{argument}` placeholders filled from the call's arguments. */
  readonly returns: string;
  readonly requiresApproval?: boolean | undefined;
  readonly gate?: string | undefined;
}

/** The structured output type and its validator, which asks for one retry. */
export interface ConformanceOutput {
  readonly name: string;
  readonly fields: Readonly<Record<string, string>>;
  readonly capitalized: string;
  readonly retryMessage: string;
}

export interface ConformanceData {
  readonly replies: readonly ConformanceReply[];
  readonly resultsText: string;
  readonly otherwiseText: string;
  readonly output: ConformanceOutput;
  readonly tools: Readonly<Record<string, ConformanceTool>>;
}

/** The data file does not have the shape this module reads. */
export class ConformanceCasesError extends Error {
  override readonly name = "ConformanceCasesError";
}

type Json = Record<string, unknown>;

function object(where: string, value: unknown, required: readonly string[]): Json {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConformanceCasesError(`${where}: expected an object, got ${JSON.stringify(value)}`);
  }
  const missing = required.filter((k) => !(k in value));
  if (missing.length > 0) throw new ConformanceCasesError(`${where}: missing ${missing.join(", ")}`);
  return value as Json;
}

function string(where: string, value: unknown): string {
  if (typeof value !== "string") throw new ConformanceCasesError(`${where}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function optional<T>(where: string, value: unknown, read: (where: string, value: unknown) => T): T | undefined {
  return value === undefined ? undefined : read(where, value);
}

function boolean(where: string, value: unknown): boolean {
  if (typeof value !== "boolean") throw new ConformanceCasesError(`${where}: expected a boolean, got ${JSON.stringify(value)}`);
  return value;
}

function list(where: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new ConformanceCasesError(`${where}: expected a list, got ${JSON.stringify(value)}`);
  return value;
}

function effect(where: string, value: unknown): ToolEffect {
  const name = string(where, value);
  const known = (ToolEffect as unknown as Record<string, ToolEffect | undefined>)[name];
  if (known === undefined || name === "UNSPECIFIED") throw new ConformanceCasesError(`${where}: no tool effect ${name}`);
  return known;
}

function call(where: string, raw: unknown): ScriptedToolCall {
  const c = object(where, raw, ["id", "name", "arguments"]);
  return { id: string(`${where}.id`, c["id"]), name: string(`${where}.name`, c["name"]), input: object(`${where}.arguments`, c["arguments"], []) };
}

function reply(where: string, raw: unknown): ConformanceReply {
  const r = object(where, raw, ["prompt"]);
  const after = object(`${where}.after_results`, r["after_results"] ?? {}, []);
  const output = (key: string) => optional(`${where}.${key}`, r[key], (w, v) => object(w, v, []));
  return {
    prompt: string(`${where}.prompt`, r["prompt"]),
    calls: list(`${where}.calls`, r["calls"] ?? []).map((c, i) => call(`${where}.calls[${i}]`, c)),
    output: output("output"),
    retriedOutput: output("retried_output"),
    gate: optional(`${where}.after_results.gate`, after["gate"], string),
    error: optional(`${where}.after_results.error`, after["error"], string),
    reasoning: optional(`${where}.reasoning`, r["reasoning"], string),
  };
}

function tool(name: string, raw: unknown): ConformanceTool {
  const where = `tools.${name}`;
  const t = object(where, raw, ["effect", "returns"]);
  return {
    name,
    effect: effect(`${where}.effect`, t["effect"]),
    returns: string(`${where}.returns`, t["returns"]),
    requiresApproval: optional(`${where}.requires_approval`, t["requires_approval"], boolean),
    gate: optional(`${where}.gate`, t["gate"], string),
  };
}

/**
 * The sections a TypeScript app reads, typed; `ConformanceCasesError` names the
 * first thing out of shape. Keys it does not read are left to the Python reader
 * (`dex_agents_testing.conformance`), which is the file's schema.
 */
export function parseConformanceCases(raw: unknown): ConformanceData {
  const top = object("cases.json", raw, ["version", "model", "output", "tools"]);
  if (top["version"] !== 1) throw new ConformanceCasesError(`cases.json: version ${JSON.stringify(top["version"])}; this reader knows 1`);
  const model = object("model", top["model"], ["replies", "results_text", "otherwise_text"]);
  const output = object("output", top["output"], ["name", "fields", "retry_unless_capitalized", "retry_message"]);
  const fields = object("output.fields", output["fields"], []);
  const tools = object("tools", top["tools"], []);
  return {
    replies: list("model.replies", model["replies"]).map((r, i) => reply(`model.replies[${i}]`, r)),
    resultsText: string("model.results_text", model["results_text"]),
    otherwiseText: string("model.otherwise_text", model["otherwise_text"]),
    output: {
      name: string("output.name", output["name"]),
      fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, string(`output.fields.${k}`, v)])),
      capitalized: string("output.retry_unless_capitalized", output["retry_unless_capitalized"]),
      retryMessage: string("output.retry_message", output["retry_message"]),
    },
    tools: Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, tool(name, t)])),
  };
}

const RELATIVE = join("proto", "testdata", "conformance", "cases.json");

/**
 * The data file: `$DEX_CONFORMANCE_CASES`, else `$DEX_TESTDATA_DIR/conformance/cases.json`
 * (Bazel's TypeScript tests), else `proto/testdata/conformance/cases.json` above
 * this module or the working directory (a checkout).
 */
export function locateConformanceCases(): string {
  const configured = process.env["DEX_CONFORMANCE_CASES"];
  if (configured) return resolve(configured);
  const testdata = process.env["DEX_TESTDATA_DIR"];
  if (testdata && existsSync(join(testdata, "conformance", "cases.json"))) return join(testdata, "conformance", "cases.json");
  for (let dir of [dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (;;) {
      if (existsSync(join(dir, RELATIVE))) return join(dir, RELATIVE);
      if (dir === resolve(dir, "..")) break;
      dir = resolve(dir, "..");
    }
  }
  throw new Error(`${RELATIVE} not found; set DEX_CONFORMANCE_CASES`);
}

const loaded = new Map<string, ConformanceData>();

export function readConformanceCases(path: string = locateConformanceCases()): ConformanceData {
  let data = loaded.get(path);
  if (data === undefined) {
    data = parseConformanceCases(JSON.parse(readFileSync(path, "utf8")));
    loaded.set(path, data);
  }
  return data;
}

/** `template` with `{name}` replaced by `values[name]` (as Python's `str.format` does for these files). */
function fillTemplate(template: string, values: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

/** Where a script logs model calls and tool runs, and waits for gate files (`RunLog`). */
export type ScriptLog = Pick<RunLog, "write" | "waitForGate">;

const DESCRIPTIONS: Readonly<Record<string, string>> = {
  get_weather: "The weather in a city",
  book_trip: "Books a trip to a city",
  charge: "Charges the card",
  charge_now: "Charges the card at once",
};

/** A log that records nothing and opens every gate (a run-state fixture's replay). */
const NO_LOG: ScriptLog = { write: () => undefined, waitForGate: async () => undefined };

/**
 * The scripted model and tools of one sidecar app, decided by the data file; an
 * app factory turns `answer` into its framework's response and calls `runTool`
 * from each tool body.
 */
export class ConformanceScript {
  readonly log: ScriptLog;
  readonly data: ConformanceData;
  readonly #extra: readonly ConformanceReply[];

  /** `extra`: replies of an app's own prompts (after the data file's). */
  constructor(log: ScriptLog = NO_LOG, data: ConformanceData = readConformanceCases(), extra: readonly ConformanceReply[] = []) {
    this.log = log;
    this.data = data;
    this.#extra = extra;
  }

  get tools(): readonly ConformanceTool[] {
    return Object.values(this.data.tools);
  }

  replyFor(prompt: string): ConformanceReply | undefined {
    return [...this.data.replies, ...this.#extra].find((r) => prompt.startsWith(r.prompt));
  }

  /**
   * A tool's parameters as JSON types (`string`, `number`, `boolean`), read from
   * the replies' calls of it, so each framework's tool schema comes from the file.
   */
  parameters(name: string): Record<string, "string" | "number" | "boolean"> {
    const types: Record<string, "string" | "number" | "boolean"> = {};
    for (const call of this.data.replies.flatMap((r) => r.calls).filter((c) => c.name === name)) {
      for (const [key, value] of Object.entries(call.input)) {
        const type = typeof value;
        if (type !== "string" && type !== "number" && type !== "boolean") throw new Error(`${name}.${key}: a ${type} argument`);
        types[key] = type;
      }
    }
    return types;
  }

  /** What a tool says it does (the text the recorded run-state fixtures carry). */
  description(name: string): string {
    return DESCRIPTIONS[name] ?? `The conformance tool ${name}`;
  }

  /** Whether the session that starts with `prompt` asks for the structured output. */
  asksForOutput(prompt: string | undefined): boolean {
    return prompt !== undefined && this.replyFor(prompt)?.output !== undefined;
  }

  /** Each tool's policy under the name the framework gives it (`named` maps it). */
  policies(named: (name: string) => string = (name) => name): Record<string, ToolPolicy> {
    return Object.fromEntries(
      this.tools.map((t) => [named(t.name), { effect: t.effect, ...(t.requiresApproval !== undefined ? { requiresApproval: t.requiresApproval } : {}) }]),
    );
  }

  /**
   * Logs the call and answers it, as `ScriptedApp.answer` does; the run-state
   * recorder notes the answer as the model script of a fixture.
   */
  async answer(call: ScriptedModelCall): Promise<ScriptedAnswer> {
    const answer = await this.decide(call);
    noteModelReply(answer);
    return answer;
  }

  /** `answer` without the recorder's note, for an app whose fixtures script its framework's own replies. */
  async decide(call: ScriptedModelCall): Promise<ScriptedAnswer> {
    const { results } = call;
    this.logModel(call);
    // A validator's retry that comes as a user message answers the prompt before it.
    const retry = this.data.output.retryMessage;
    const prompts = call.prompts.filter((p) => !p.includes(retry));
    const retried = call.retried ?? prompts.length < call.prompts.length;
    const reply = this.replyFor(prompts.at(-1) ?? "");
    if (reply?.output !== undefined) return { calls: [], output: (retried ? reply.retriedOutput : undefined) ?? reply.output };
    if (results.length > 0) {
      if (reply?.error !== undefined) throw new Error(reply.error);
      if (reply?.gate !== undefined) {
        try {
          await this.log.waitForGate(reply.gate, call.signal);
        } catch (error) {
          // cancel_turn reached the model call's signal.
          this.log.write({ kind: "model_aborted", name: "model", prompts: call.prompts });
          throw error;
        }
      }
      const shown = results.map((r) => `${r.toolName}=${r.output}`).join("; ");
      return { text: fillTemplate(this.data.resultsText, { results: shown }), calls: [] };
    }
    if (reply !== undefined && reply.calls.length > 0) {
      const n = prompts.length;
      return { calls: reply.calls.map((c) => ({ ...c, id: `${c.id}${n}` })) };
    }
    const text = fillTemplate(this.data.otherwiseText, { messages: call.messageCount });
    return { text, calls: [], ...(reply?.reasoning !== undefined ? { reasoning: reply.reasoning } : {}) };
  }

  /** Logs a model call in the run log's format (`answer` does; an app's own replies call it). */
  logModel(call: Pick<ScriptedModelCall, "prompts" | "results" | "messageCount" | "tools">): void {
    this.log.write({
      kind: "model",
      name: "model",
      messages: call.messageCount,
      prompts: call.prompts,
      results: Object.fromEntries(call.results.map((r) => [r.toolCallId, r.output])),
      ...(call.tools !== undefined ? { tools: call.tools } : {}),
    });
  }

  /**
   * A tool body: logs the run with the Step's idempotency key (if any), waits
   * for the tool's gate and returns the data file's output.
   */
  async runTool(name: string, input: Readonly<Record<string, unknown>>, key: string | undefined, signal?: AbortSignal): Promise<string> {
    const tool = this.data.tools[name];
    if (tool === undefined) throw new Error(`cases.json has no tool ${name}`);
    this.logTool(name, key);
    if (tool.gate !== undefined) await this.log.waitForGate(tool.gate, signal);
    return fillTemplate(tool.returns, input);
  }

  /** Logs a tool run (`runTool` does; an app's own tools call it directly). */
  logTool(name: string, key: string | undefined): void {
    this.log.write({ kind: "tool", name, key: key ?? null });
  }

  /** The output validator's retry message for an output it rejects, else undefined. */
  retryReason(output: Readonly<Record<string, unknown>>): string | undefined {
    const spec = this.data.output;
    const value = String(output[spec.capitalized]);
    return value === value.charAt(0).toUpperCase() + value.slice(1).toLowerCase() ? undefined : spec.retryMessage;
  }
}
