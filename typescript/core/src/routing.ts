/**
 * Routing the calls of one model response to their Steps, defined once for
 * every adapter (the Python kit's `ToolRouter`): each call ID must be usable
 * (non-empty, without `/`, unique within the turn, since it becomes part of
 * the idempotency key), an enabled built-in tool is the session's, and
 * otherwise the runner's policy, then the session's, wins over what the
 * framework declares, then the default effect. An adapter only reads its
 * framework and hands each call to `ToolRouter.defer`.
 *
 * @module
 */

import type { ToolEffect } from "@dex-agents/contracts";
import { resolveToolPolicy } from "./policies.js";
import type { AgentTurnContext, DeferredToolCall, ResolvedToolPolicy, ToolPolicy } from "./runner.js";
import { BUILT_IN_TOOL_POLICY } from "./stepwise/built_ins.js";
import { deferredToolCall } from "./values.js";

const MODEL_FAULTS = {
  empty: "has an empty tool call ID",
  slash: "has a tool call ID that contains '/'",
  reused: "reuses a tool call ID of this turn; IDs must be unique within a turn",
} as const;

/** Why the model's call breaks the tool-call-ID rule, worded for an adapter's error, or undefined. */
export function toolCallIdProblem(toolName: string, toolCallId: string, used: ReadonlySet<string>): string | undefined {
  const fault =
    typeof toolCallId !== "string" || toolCallId === ""
      ? MODEL_FAULTS.empty
      : toolCallId.includes("/")
        ? MODEL_FAULTS.slash
        : used.has(toolCallId)
          ? MODEL_FAULTS.reused
          : undefined;
  return fault === undefined ? undefined : `the model's call of '${toolName}' (ID '${toolCallId}') ${fault}`;
}

/** The model's call has an unusable ID; the RunModel attempt fails and a retry asks the model again. */
export class InvalidToolCallIdError extends Error {
  override name = "InvalidToolCallIdError";
  constructor(
    message: string,
    readonly toolCallId: string,
    readonly toolName: string,
  ) {
    super(message);
  }
}

/** What the framework says about one call, beside its ID, name and arguments. */
export interface RoutedCall {
  readonly toolCallId: string;
  readonly toolName: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
  readonly frameworkEffect?: ToolEffect | undefined;
  readonly frameworkRequiresApproval?: boolean | undefined;
  /** The name policies know the tool by, when it differs from the name the model called. */
  readonly policyName?: string | undefined;
  readonly toolSourceReference?: string | undefined;
}

export interface ToolRouterOptions {
  /** The runner's own policies; they win over the session's. */
  readonly toolPolicies?: ReadonlyMap<string, ToolPolicy> | Readonly<Record<string, ToolPolicy>> | undefined;
  /** The runner's default effect; absent, the session's. */
  readonly defaultToolEffect?: ToolEffect | undefined;
  /** More IDs the turn already used (calls not yet recorded). */
  readonly takenIds?: Iterable<string>;
}

/** The calls of one RunModel Step, checked and given their policies. */
export class ToolRouter {
  readonly #turn: AgentTurnContext;
  readonly #policies: ReadonlyMap<string, ToolPolicy>;
  readonly #defaultEffect: ToolEffect;
  readonly #used: Set<string>;

  constructor(turn: AgentTurnContext, options: ToolRouterOptions = {}) {
    const own = options.toolPolicies;
    const ownEntries = own === undefined ? [] : own instanceof Map ? [...own] : Object.entries(own);
    this.#turn = turn;
    this.#policies = new Map([...turn.toolPolicies, ...ownEntries]);
    this.#defaultEffect = options.defaultToolEffect ?? turn.defaultToolEffect;
    this.#used = new Set([...turn.toolCalls.map((r) => r.toolCallId), ...(options.takenIds ?? [])]);
  }

  /** Takes the call's ID for this turn; answers the problem instead when the ID is unusable. */
  claimId(toolName: string, toolCallId: string): string | undefined {
    const problem = toolCallIdProblem(toolName, toolCallId, this.#used);
    if (problem === undefined) this.#used.add(toolCallId);
    return problem;
  }

  /** The call's policy: an enabled built-in's, else the policies' over the framework's, else the default. */
  policy(
    toolName: string,
    framework: Pick<RoutedCall, "frameworkEffect" | "frameworkRequiresApproval" | "policyName"> = {},
  ): ResolvedToolPolicy {
    if (this.#turn.enabledBuiltInTools.includes(toolName)) return BUILT_IN_TOOL_POLICY;
    return resolveToolPolicy(framework.policyName ?? toolName, {
      toolPolicies: this.#policies,
      defaultEffect: this.#defaultEffect,
      frameworkEffect: framework.frameworkEffect,
      frameworkRequiresApproval: framework.frameworkRequiresApproval,
    });
  }

  /** Whether the runner's or the session's policies name `toolName`. */
  hasPolicy(toolName: string): boolean {
    return this.#policies.has(toolName);
  }

  /**
   * The call as the session defers it.
   *
   * @throws InvalidToolCallIdError The ID is unusable.
   */
  defer(call: RoutedCall): DeferredToolCall {
    const problem = this.claimId(call.toolName, call.toolCallId);
    if (problem !== undefined) throw new InvalidToolCallIdError(problem, call.toolCallId, call.toolName);
    return deferredToolCall(call, this.policy(call.toolName, call));
  }
}

