/**
 * Builders of the seam's values, which are runner.proto's generated messages
 * (`runner.ts`). Each is `create` with the protocol's own defaults where the
 * generated ones differ: a question allows free text unless it says otherwise,
 * a poll interval is given in seconds (the unit of the session's timers) and
 * sent in the wire's milliseconds, counts are numbers. Outcomes are told apart
 * with `isMessage(outcome, RunnerTurnCompletedSchema)` or the `is...` guards.
 *
 * @module
 */

import { create, isMessage, type MessageInitShape } from "@bufbuild/protobuf";
import {
  AgentUsageSchema,
  RunnerContextSummarySchema,
  RunnerDeferredToolCallSchema,
  RunnerFrameworkMessageSchema,
  RunnerModelCallMetadataSchema,
  RunnerToolCallsRequestedSchema,
  RunnerToolInputRequestedSchema,
  RunnerToolResultSchema,
  RunnerToolTaskPendingSchema,
  RunnerToolTaskStartedSchema,
  RunnerTurnCompletedSchema,
  RunnerTurnContinuedSchema,
} from "@dex-agents/contracts";
import { pollIntervalMilliseconds } from "./poll_interval.js";
import type {
  ContextSummaryResult,
  DeferredToolCall,
  FrameworkMessage,
  ResolvedToolPolicy,
  ToolCallsRequested,
  ToolExecutionResult,
  ToolInputRequested,
  ToolTaskPending,
  ToolTaskStarted,
  TurnCompleted,
  TurnContinued,
  Usage,
} from "./runner.js";

export function frameworkMessage(init: MessageInitShape<typeof RunnerFrameworkMessageSchema>): FrameworkMessage {
  if (typeof init.frameworkItem !== "string") throw new TypeError("a framework message needs its frameworkItem as JSON text");
  return create(RunnerFrameworkMessageSchema, init);
}

/** A model call's metadata as `create` takes it: the fields without `$typeName`. */
export type ModelCallMetadataInit = MessageInitShape<typeof RunnerModelCallMetadataSchema>;

/** Counts as numbers; absent ones are zero. */
export interface UsageCounts {
  readonly modelCalls?: number | undefined;
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly cachedInputTokens?: number | undefined;
  readonly reasoningTokens?: number | undefined;
}

export function modelUsage(counts: UsageCounts): Usage {
  return create(AgentUsageSchema, {
    modelCalls: BigInt(counts.modelCalls ?? 0),
    inputTokens: BigInt(counts.inputTokens ?? 0),
    outputTokens: BigInt(counts.outputTokens ?? 0),
    cachedInputTokens: BigInt(counts.cachedInputTokens ?? 0),
    reasoningTokens: BigInt(counts.reasoningTokens ?? 0),
  });
}

/**
 * An outcome's fields as `create` takes them, except that `usage` may be
 * plain counts and `newMessages` a read-only list.
 */
type OutcomeInit<T> = Omit<T, "usage" | "newMessages"> & {
  readonly usage?: Usage | UsageCounts | undefined;
  readonly newMessages?: readonly MessageInitShape<typeof RunnerFrameworkMessageSchema>[] | undefined;
};

function outcomeFields<T>(init: OutcomeInit<T>): T {
  const { usage, newMessages, ...rest } = init;
  return {
    ...rest,
    ...(usage !== undefined ? { usage: isMessage(usage, AgentUsageSchema) ? usage : modelUsage(usage) } : {}),
    ...(newMessages !== undefined ? { newMessages: [...newMessages] } : {}),
  } as T;
}

export function turnCompleted(init: OutcomeInit<NonNullable<MessageInitShape<typeof RunnerTurnCompletedSchema>>>): TurnCompleted {
  return create(RunnerTurnCompletedSchema, outcomeFields(init));
}

export function toolCallsRequested(
  init: OutcomeInit<NonNullable<MessageInitShape<typeof RunnerToolCallsRequestedSchema>>> & {
    readonly toolCalls: readonly DeferredToolCall[];
  },
): ToolCallsRequested {
  const { toolCalls, ...rest } = init;
  return create(RunnerToolCallsRequestedSchema, { ...outcomeFields(rest), toolCalls: [...toolCalls] });
}

export function turnContinued(init: OutcomeInit<NonNullable<MessageInitShape<typeof RunnerTurnContinuedSchema>>>): TurnContinued {
  return create(RunnerTurnContinuedSchema, outcomeFields(init));
}

/** A summary call's answer. */
export function contextSummary(init: {
  readonly text: string;
  readonly usage?: Usage | UsageCounts | undefined;
  readonly modelCallMetadata?: ModelCallMetadataInit | undefined;
}): ContextSummaryResult {
  return create(RunnerContextSummarySchema, outcomeFields(init));
}

export function toolResult(output: string): ToolExecutionResult {
  if (typeof output !== "string") throw new TypeError("a tool result's output must be a string");
  return create(RunnerToolResultSchema, { output });
}

export function toolInputRequested(question: {
  readonly question: string;
  readonly choices?: readonly string[] | undefined;
  /** True unless told: a question allows a free-text answer. */
  readonly allowsFreeText?: boolean | undefined;
  /** Opaque text the next attempt needs to resume the question's request. */
  readonly continuation?: string | undefined;
}): ToolInputRequested {
  return create(RunnerToolInputRequestedSchema, {
    question: question.question,
    choices: [...(question.choices ?? [])],
    allowsFreeText: question.allowsFreeText ?? true,
    continuation: question.continuation,
  });
}

export function toolTaskStarted(taskId: string, pollIntervalSeconds: number): ToolTaskStarted {
  return create(RunnerToolTaskStartedSchema, {
    taskId,
    pollIntervalMilliseconds: pollIntervalMilliseconds(pollIntervalSeconds, "task_started"),
  });
}

export function toolTaskPending(pollIntervalSeconds: number, continuation?: string): ToolTaskPending {
  return create(RunnerToolTaskPendingSchema, {
    pollIntervalMilliseconds: pollIntervalMilliseconds(pollIntervalSeconds, "task_pending"),
    continuation,
  });
}

export const isTurnCompleted = (value: unknown): value is TurnCompleted => isMessage(value, RunnerTurnCompletedSchema);
export const isToolCallsRequested = (value: unknown): value is ToolCallsRequested =>
  isMessage(value, RunnerToolCallsRequestedSchema);
export const isTurnContinued = (value: unknown): value is TurnContinued => isMessage(value, RunnerTurnContinuedSchema);
export const isToolResult = (value: unknown): value is ToolExecutionResult => isMessage(value, RunnerToolResultSchema);
export const isToolInputRequested = (value: unknown): value is ToolInputRequested =>
  isMessage(value, RunnerToolInputRequestedSchema);
export const isToolTaskStarted = (value: unknown): value is ToolTaskStarted => isMessage(value, RunnerToolTaskStartedSchema);
export const isToolTaskPending = (value: unknown): value is ToolTaskPending => isMessage(value, RunnerToolTaskPendingSchema);

/** `call` deferred with `policy`'s effect and approval. */
export function deferredToolCall(
  call: {
    readonly toolCallId: string;
    readonly toolName: string;
    readonly arguments: string;
    readonly toolSourceReference?: string | undefined;
  },
  policy: ResolvedToolPolicy,
): DeferredToolCall {
  return create(RunnerDeferredToolCallSchema, {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    arguments: call.arguments,
    effect: policy.effect,
    requiresApproval: policy.requiresApproval,
    toolSourceReference: call.toolSourceReference,
  });
}

/** The effect and approval `call` runs with, as one value. */
export function policyOf(call: DeferredToolCall): ResolvedToolPolicy {
  return { effect: call.effect, requiresApproval: call.requiresApproval };
}
