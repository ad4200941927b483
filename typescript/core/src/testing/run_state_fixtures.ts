/**
 * Run-state fixtures of the TypeScript adapters, read and resumed by one
 * checker: a fixture (`<adapter>/fixtures/run_states/<point>.json`) holds the
 * `RunnerTurnContext` wire JSON a real session's sidecar received at a point
 * (with the framework run state today's code stored), the scripted model's
 * replies and the normalised next action. Resuming it with the current
 * adapter must give the same action, so sessions in flight survive a refactor
 * of the adapters. Fixtures are recorded (run_state_recorder.ts), never
 * rewritten by a test.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import {
  decodeRunnerTurnContext,
  MessageRole,
  RunModelStepRequestSchema,
  type RunModelStepResponse,
  type RunnerTurnContext,
} from "@dex-agents/contracts";
import { describeRunner, supports, type Capability } from "../capabilities.js";
import { handlers, type StreamFrames } from "../handlers.js";
import type { AgentFrameworkRunner, DeferredToolOutcome } from "../runner.js";
import type { ScriptedAnswer, ScriptedModelCall } from "./conformance.js";

export const RUN_STATE_POINTS = [
  "awaiting_tool_result",
  "awaiting_approval",
  "mid_plan",
  "after_compaction",
  "after_handoff",
] as const;
export type RunStatePoint = (typeof RUN_STATE_POINTS)[number];

/** The next action of a RunModelStep, without what the framework makes up per run. */
export type NormalizedOutcome =
  | { readonly kind: "turn_completed"; readonly text: string | null; readonly turn_error?: string }
  | { readonly kind: "tool_calls_requested"; readonly calls: readonly { readonly tool_name: string; readonly arguments: unknown }[] }
  | { readonly kind: "turn_continued" };

export interface RunStateFixture {
  readonly file: string;
  readonly adapter: string;
  readonly point: RunStatePoint;
  readonly turnContext: RunnerTurnContext;
  readonly modelScript: readonly unknown[];
  readonly expected: NormalizedOutcome;
}

/** The capability a point needs; every runner reaches a tool result and an approval. */
export const POINT_CAPABILITIES: Partial<Record<RunStatePoint, Capability>> = {
  mid_plan: "plan_mode",
  after_compaction: "compaction",
  after_handoff: "handoffs",
};

/**
 * The points an adapter cannot reach, each with its reason: every point is
 * either recorded or here, no fixture of an unsupported point exists, and the
 * runner declares the capability the point needs unsupported, so a gap cannot
 * hide behind a reason.
 */
export function assertRunStatePointsUnsupported(
  directory: URL,
  recorded: readonly RunStatePoint[],
  unsupported: Partial<Record<RunStatePoint, string>>,
  runner: AgentFrameworkRunner<unknown>,
): void {
  const path = fileURLToPath(directory);
  const named = [...recorded, ...(Object.keys(unsupported) as RunStatePoint[])].sort();
  assert.deepEqual(named, [...RUN_STATE_POINTS].sort(), `${path}: every point is recorded or unsupported, once`);
  const capabilities = describeRunner(runner);
  for (const [point, reason] of Object.entries(unsupported) as [RunStatePoint, string][]) {
    assert.ok(reason.trim() !== "", `${path}: no reason ${point} is unsupported`);
    assert.ok(!existsSync(join(path, `${point}.json`)), `${path}: ${point}.json exists, yet ${point} is called unsupported`);
    const capability = POINT_CAPABILITIES[point];
    assert.ok(capability !== undefined, `every runner reaches ${point}; record it`);
    assert.ok(
      !supports(capabilities, capability),
      `the runner declares ${capability}, so ${point} is not unsupported: record its fixture`,
    );
  }
}

/** The outcome frame as the next action: its kind, the answer's text or the calls' names and arguments. */
export function normalizedOutcome(response: RunModelStepResponse): NormalizedOutcome {
  if (response.turnCompleted !== undefined) {
    const { newMessages, turnError } = response.turnCompleted;
    const answer = newMessages.filter((m) => m.role === MessageRole.ASSISTANT && m.text !== undefined && m.text !== "").at(-1);
    return {
      kind: "turn_completed",
      text: answer?.text ?? null,
      ...(turnError !== undefined ? { turn_error: turnError } : {}),
    };
  }
  if (response.toolCallsRequested !== undefined) {
    return {
      kind: "tool_calls_requested",
      calls: response.toolCallsRequested.toolCalls.map((c) => ({
        tool_name: c.toolName,
        arguments: JSON.parse(c.arguments) as unknown,
      })),
    };
  }
  if (response.turnContinued !== undefined) return { kind: "turn_continued" };
  throw new TypeError(`the RunModelStep response has no outcome: ${JSON.stringify(response.failure ?? response)}`);
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function field<T>(raw: Record<string, unknown>, name: string, file: string, check: (v: unknown) => v is T): T {
  const value = raw[name];
  assert.ok(check(value), `${file}: field ${name} is missing or malformed: ${JSON.stringify(value)}`);
  return value;
}

const isString = (v: unknown): v is string => typeof v === "string" && v !== "";
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isArray = (v: unknown): v is unknown[] => Array.isArray(v);

/** One fixture file, checked: its fields, its decoded turn and its run state's recorded sha256. */
export function readRunStateFixture(file: string): RunStateFixture {
  const raw: unknown = JSON.parse(readFileSync(file, "utf8"));
  assert.ok(isObject(raw), `${file}: not a JSON object`);
  const point = field(raw, "point", file, isString);
  assert.ok((RUN_STATE_POINTS as readonly string[]).includes(point), `${file}: unknown point ${point}`);
  field(raw, "recorded_at", file, isString);
  const recordedWith = field(raw, "recorded_with", file, isObject);
  field(recordedWith, "framework", file, isString);
  field(recordedWith, "dex_agents_commit", file, isString);
  const turnContext = decodeRunnerTurnContext(JSON.stringify(field(raw, "turn_context", file, isObject)));
  const state = turnContext.frameworkRunState;
  assert.ok(state !== undefined && state !== "", `${file}: the turn carries no framework run state`);
  assert.equal(
    sha256(state),
    field(raw, "framework_run_state_sha256", file, isString),
    `${file}: the framework run state is not the one recorded (its sha256 differs); fixtures are never rewritten, record a new one`,
  );
  return {
    file,
    adapter: field(raw, "adapter", file, isString),
    point: point as RunStatePoint,
    turnContext,
    modelScript: field(raw, "model_script", file, isArray),
    expected: field(raw, "expected", file, isObject) as unknown as NormalizedOutcome,
  };
}

/** Every fixture of `adapter` in `directory`, which must hold exactly `points`. */
export function readRunStateFixtures(directory: URL, adapter: string, points: readonly RunStatePoint[]): RunStateFixture[] {
  const path = fileURLToPath(directory);
  const files = readdirSync(path).filter((f) => f.endsWith(".json")).sort();
  assert.deepEqual(files, points.map((p) => `${p}.json`).sort(), `${path}: the adapter's run-state fixtures`);
  return files.map((f) => {
    const fixture = readRunStateFixture(join(path, f));
    assert.equal(fixture.adapter, adapter, `${fixture.file}: recorded for another adapter`);
    assert.equal(`${fixture.point}.json`, f, `${fixture.file}: the file is named after another point`);
    return fixture;
  });
}

/** The model script of a fixture, reply by reply; it throws past its end. */
export class ModelScript<T> {
  #next = 0;
  constructor(readonly replies: readonly T[]) {}

  next(): T {
    const reply = this.replies[this.#next];
    if (reply === undefined) {
      throw new Error(`the model was called ${this.#next + 1} times; the fixture's model_script has ${this.replies.length} replies`);
    }
    this.#next += 1;
    return reply;
  }

  get used(): number {
    return this.#next;
  }
}

function fixtureFrames(): StreamFrames {
  return {
    signal: new AbortController().signal,
    events: { write: () => undefined, writeRaw: () => undefined },
    heartbeat: async () => undefined,
    saveCheckpoint: async () => undefined,
  };
}

/**
 * Resumes `fixture` with the runner `build` makes around its model script,
 * through the sidecar's RunModelStep handler, and asserts the next action is
 * the recorded one and the script was used up.
 */
export async function resumeRunStateFixture<T>(
  fixture: RunStateFixture,
  build: (script: ModelScript<T>) => AgentFrameworkRunner<DeferredToolOutcome>,
): Promise<void> {
  const script = new ModelScript(fixture.modelScript as readonly T[]);
  const request = create(RunModelStepRequestSchema, { flowType: fixture.adapter, turn: fixture.turnContext });
  const handler = handlers["RunModelStep"];
  assert.ok(handler !== undefined);
  const response = (await handler(build(script), request as never, fixtureFrames(), undefined)) as RunModelStepResponse;
  assert.deepEqual(normalizedOutcome(response), fixture.expected, `${fixture.file}: the resumed run's next action`);
  assert.equal(script.used, script.replies.length, `${fixture.file}: model calls of the resumed run`);
}

/**
 * An app factory's model answering from `script`: its first call must see the
 * results of the fixture's finished tool calls, as the resumed framework
 * rebuilt them from the stored run state.
 */
export function fixtureReply(
  fixture: RunStateFixture,
  script: ModelScript<ScriptedAnswer>,
): (call: ScriptedModelCall) => Promise<ScriptedAnswer> {
  const stored = Object.fromEntries(
    fixture.turnContext.toolCalls.flatMap((c) => (c.output !== undefined ? [[c.toolCallId, c.output]] : [])),
  );
  return async (call) => {
    if (script.used === 0) {
      const seen = Object.fromEntries(call.results.map((r) => [r.toolCallId, r.output]));
      assert.deepEqual(seen, stored, `${fixture.file}: the tool results the resumed model call saw`);
    }
    return script.next();
  };
}
