/**
 * Declared runner capabilities: what a runner's `describe()` returns, each
 * missing capability with its reason (runner.proto's `RunnerCapabilities`).
 * The Worker calls an optional method only when its capability is declared,
 * and docs/adapters.md tabulates every adapter's declaration.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  RunnerCapabilitiesSchema,
  RunnerCapabilityGapSchema,
  type RunnerCapabilities,
} from "@dex-agents/contracts";
import type { AgentFrameworkRunner } from "./runner.js";

/** Each capability's proto name and its field in `RunnerCapabilities`, in proto order. */
const FIELDS = {
  text_deltas: "textDeltas",
  reasoning_deltas: "reasoningDeltas",
  usage: "usage",
  built_in_tools: "builtInTools",
  mcp_sources: "mcpSources",
  mcp_tasks: "mcpTasks",
  structured_output: "structuredOutput",
  handoffs: "handoffs",
  plan_mode: "planMode",
  compaction: "compaction",
  parallel_deferred_calls: "parallelDeferredCalls",
  tool_cancellation: "toolCancellation",
  tracing: "tracing",
  unfinished_turn_messages: "unfinishedTurnMessages",
  tool_task_polls: "toolTaskPolls",
  tool_task_cancels: "toolTaskCancels",
} as const;

/** A capability by its proto name, e.g. `text_deltas`. */
export type Capability = keyof typeof FIELDS;

/** The capability names in proto order. */
export const CAPABILITIES: readonly Capability[] = Object.keys(FIELDS) as Capability[];

/** Whether `capabilities` supports `capability`. */
export function supports(capabilities: RunnerCapabilities, capability: Capability): boolean {
  return capabilities[FIELDS[capability]];
}

/**
 * Capabilities where each one is either supported or has the reason it is not.
 *
 * @throws TypeError for a name that is unknown, listed twice, missing, or has a blank reason.
 */
export function declareCapabilities(declaration: {
  readonly supported: readonly Capability[];
  readonly unsupported: Readonly<Partial<Record<Capability, string>>>;
}): RunnerCapabilities {
  const named: string[] = [...declaration.supported, ...Object.keys(declaration.unsupported)];
  const problems: [string, string[]][] = [
    ["unknown", named.filter((n) => !(n in FIELDS))],
    ["listed twice", [...new Set(named.filter((n, i) => named.indexOf(n) !== i))]],
    ["neither supported nor given a reason", CAPABILITIES.filter((n) => !named.includes(n))],
    [
      "unsupported without a reason",
      Object.entries(declaration.unsupported)
        .filter(([, reason]) => (reason ?? "").trim() === "")
        .map(([name]) => name),
    ],
  ];
  for (const [problem, names] of problems) {
    if (names.length > 0) throw new TypeError(`capabilities ${problem}: ${names.join(", ")}`);
  }
  const capabilities = create(RunnerCapabilitiesSchema, {
    gaps: CAPABILITIES.filter((n) => n in declaration.unsupported).map((capability) =>
      create(RunnerCapabilityGapSchema, {
        capability,
        reason: declaration.unsupported[capability] ?? "",
      }),
    ),
  });
  for (const name of declaration.supported) capabilities[FIELDS[name]] = true;
  return capabilities;
}

const UNDECLARED = "not declared: the runner has no describe()";

/** The optional methods behind each capability the Worker calls. */
const METHODS: Readonly<Partial<Record<Capability, readonly (keyof AgentFrameworkRunner)[]>>> = {
  unfinished_turn_messages: ["buildUnfinishedTurnMessages"],
  tool_task_polls: ["pollToolTask"],
  tool_task_cancels: ["cancelToolTask"],
  compaction: ["estimateInputTokens", "selectCompactionCutoff", "summarizeContext"],
};

function implementsAll(runner: AgentFrameworkRunner<unknown>, capability: Capability): boolean {
  return (METHODS[capability] ?? []).every((m) => typeof runner[m] === "function");
}

/** The default for a runner without `describe()`: what its optional methods imply. */
export function impliedCapabilities(runner: AgentFrameworkRunner<unknown>): RunnerCapabilities {
  const supported = (Object.keys(METHODS) as Capability[]).filter((c) => implementsAll(runner, c));
  if (runner.supportsPlanMode === true) supported.push("plan_mode");
  const unsupported = Object.fromEntries(
    CAPABILITIES.filter((c) => !supported.includes(c)).map((c) => [c, UNDECLARED]),
  );
  return declareCapabilities({ supported, unsupported });
}

/**
 * What `runner` declares (or its methods imply, without `describe()`).
 *
 * @throws TypeError when it declares a capability whose methods it lacks.
 */
export function describeRunner(runner: AgentFrameworkRunner<unknown>): RunnerCapabilities {
  const capabilities = runner.describe?.() ?? impliedCapabilities(runner);
  const lacking = (Object.keys(METHODS) as Capability[]).filter(
    (c) => supports(capabilities, c) && !implementsAll(runner, c),
  );
  if (lacking.length > 0) {
    throw new TypeError(
      `${runner.constructor.name} declares capabilities it does not implement: ${lacking.join(", ")}`,
    );
  }
  return capabilities;
}
