/**
 * `SessionOptions`: the session options of a served Flow type. The Python
 * Worker builds its `AgentSessionOptions` from them when it describes the
 * runner, so a TypeScript application sets tool policies, approval deadlines,
 * built-in tools, plan mode and compaction next to the runner itself, and a
 * restarted Worker picks up what the sidecar serves now.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  RunnerCompactionPolicySchema,
  RunnerSessionOptionsSchema,
  RunnerToolPolicySchema,
  ToolEffect,
  type RunnerSessionOptions,
} from "@dex-agents/contracts";
import type { ToolPolicy } from "./runner.js";

/** When RunModel summarizes older messages instead of sending them all (`CompactionPolicy`). */
export interface CompactionOptions {
  readonly contextWindowTokens: number;
  /** Percent of the window at which compaction starts. Default 85. */
  readonly triggerPercent?: number;
  /** Percent of the window kept as unsummarized recent messages. Default 30. */
  readonly retainedPercent?: number;
}

/** The `AgentSessionOptions` a TypeScript application may set; the rest keep Python's defaults. */
export interface SessionOptions {
  /** Per tool name; wins over what the framework declares. */
  readonly toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /** The effect of tools without a policy or framework metadata. Default UNCLASSIFIED. */
  readonly defaultToolEffect?: ToolEffect;
  /** How long an approval waits before it is rejected. Default: forever. */
  readonly interruptDeadlineSeconds?: number;
  /** `ask_user`, `durable_wait`, `write_todos`. */
  readonly builtInTools?: readonly ("ask_user" | "durable_wait" | "write_todos")[];
  /** Longest `durable_wait`. Default 24 hours. */
  readonly maxDurableWaitSeconds?: number;
  /** Planning turns and `execute_plan`; needs `write_todos` and a plan-mode runner. */
  readonly planModeEnabled?: boolean;
  /** Needs a runner with the compaction trio. */
  readonly compaction?: CompactionOptions;
  /** Newest messages compaction always keeps; `null` keeps every message. Default 1000. */
  readonly retainedMessageLimit?: number | null;
  /** The Dex server's value limit. Default 2 MiB. */
  readonly maxValueBytes?: number;
}

function whole(name: string, value: number | undefined, least: number): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < least || value > 2 ** 31 - 1) {
    throw new RangeError(`session options: \`${name}\` must be a whole number from ${least} to 2147483647, got ${value}`);
  }
  return value;
}

function effect(name: string, value: ToolEffect | undefined): ToolEffect | undefined {
  if (value === undefined) return undefined;
  if (value === ToolEffect.UNSPECIFIED || ToolEffect[value] === undefined) {
    throw new RangeError(`session options: \`${name}\` must be a tool effect, got ${String(value)}`);
  }
  return value;
}

/**
 * The wire form. Throws RangeError for a value the wire cannot carry; the
 * Worker checks the rest (the rules of `AgentSessionOptions`) and fails to
 * start with the field named.
 */
export function wireSessionOptions(options: SessionOptions): RunnerSessionOptions {
  const compaction = options.compaction;
  return create(RunnerSessionOptionsSchema, {
    toolPolicies: Object.entries(options.toolPolicies ?? {}).map(([toolName, policy]) =>
      create(RunnerToolPolicySchema, {
        toolName,
        effect: effect(`toolPolicies.${toolName}.effect`, policy.effect),
        requiresApproval: policy.requiresApproval,
      }),
    ),
    defaultToolEffect: effect("defaultToolEffect", options.defaultToolEffect),
    interruptDeadlineSeconds: whole("interruptDeadlineSeconds", options.interruptDeadlineSeconds, 1),
    builtInTools: [...(options.builtInTools ?? [])],
    maxDurableWaitSeconds: whole("maxDurableWaitSeconds", options.maxDurableWaitSeconds, 1),
    planModeEnabled: options.planModeEnabled ?? false,
    compaction:
      compaction === undefined
        ? undefined
        : create(RunnerCompactionPolicySchema, {
            contextWindowTokens: whole("compaction.contextWindowTokens", compaction.contextWindowTokens, 1),
            triggerPercent: whole("compaction.triggerPercent", compaction.triggerPercent, 1),
            retainedPercent: whole("compaction.retainedPercent", compaction.retainedPercent, 0),
          }),
    retainedMessageLimit:
      options.retainedMessageLimit === null ? 0 : whole("retainedMessageLimit", options.retainedMessageLimit, 1),
    maxValueBytes: whole("maxValueBytes", options.maxValueBytes, 1),
  });
}
