/**
 * The runner interface, in camelCase: what a TypeScript framework adapter
 * implements. It mirrors `dex_agents.runner` (design document, "Runner
 * protocol"): one model call per `runModelStep`, every deferrable tool call
 * run by the session in its own Step through `executeDeferredToolCall`.
 * The values crossing it are runner.proto's generated messages (build them
 * with `values.ts`), so the runner service forwards them as they are; the
 * contexts are written here because they carry the event writer, the
 * heartbeat and the cancellation signal.
 *
 * @module
 */

import type {
  AgentEventPayload,
  AgentMessage,
  AgentPlan,
  AgentToolCall,
  AgentUsage,
  ContextSummary,
  InteractionMode,
  QuestionAnswer,
  RunnerCapabilities,
  RunnerContextSummary,
  RunnerDeferredToolCall,
  RunnerFrameworkMessage,
  RunnerModelCallMetadata,
  RunnerToolCallsRequested,
  RunnerToolInputRequested,
  RunnerToolResult,
  RunnerToolTaskPending,
  RunnerToolTaskStarted,
  RunnerTurnCompleted,
  RunnerTurnContinued,
  ToolEffect,
} from "@dex-agents/contracts";
import type { JsonObject } from "@bufbuild/protobuf";

/** Appends AgentEvents to the session's AgentEvents Stream (best effort). */
export interface EventWriter {
  /** A contract payload, e.g. `{ type: "text_delta", payload: create(TextDeltaPayloadSchema, ...) }`. */
  write(event: AgentEventPayload): void;
  /** An adapter event (a prefixed type) with a JSON object text as payload. */
  writeRaw(eventType: string, payloadJson: string): void;
}

/**
 * A message a runner hands the session to store: the AgentMessage projection,
 * `frameworkItem` being the framework's own JSON, replayed to it unchanged on
 * later turns (build it with `frameworkMessage`).
 */
export type FrameworkMessage = RunnerFrameworkMessage;

/** Names and annotates a model call's chat span; never stored. */
export type ModelCallMetadata = RunnerModelCallMetadata;

/** Model call and token counts (build it from numbers with `modelUsage`). */
export type Usage = AgentUsage;

/** The effect and approval a tool call runs with. */
export interface ResolvedToolPolicy {
  readonly effect: ToolEffect;
  readonly requiresApproval: boolean;
}

/** Per-tool override of the effect and approval defaults (the session's `ToolPolicy`). */
export interface ToolPolicy {
  readonly effect: ToolEffect;
  /** Absent: the effect's default. */
  readonly requiresApproval?: boolean | undefined;
}

/**
 * A tool call the model asked for, its policy resolved, which the session runs
 * in its own Step: `toolCallId` is non-empty, without `/` and unique within the
 * turn; `arguments` is JSON text. `ToolRouter.defer` builds them.
 */
export type DeferredToolCall = RunnerDeferredToolCall;

/** The model answered: the turn ends (`turnError` ends it as failed, without a retry). */
export type TurnCompleted = RunnerTurnCompleted;

/**
 * The model asked for tools: the session runs them, then resumes the turn.
 * `newMessages` are stored now; a runner that sets them implements
 * `buildUnfinishedTurnMessages`.
 */
export type ToolCallsRequested = RunnerToolCallsRequested;

/** Make another model call in the same turn. */
export type TurnContinued = RunnerTurnContinued;

export type AgentTurnOutcome = TurnCompleted | ToolCallsRequested | TurnContinued;

/** What `runModelStep` sees: the stored conversation and the turn's state. */
export interface AgentTurnContext {
  readonly flowId: string;
  readonly turnId: string;
  /** One-based attempt of the RunModel Step. */
  readonly attempt: number;
  /** Stored messages, oldest first. */
  readonly messages: readonly AgentMessage[];
  /** Set while the turn continues after tool calls or a continuation. */
  readonly frameworkRunState: string | undefined;
  /** The turn's tool call records; all final when RunModel runs. */
  readonly toolCalls: readonly AgentToolCall[];
  readonly toolPolicies: ReadonlyMap<string, ToolPolicy>;
  readonly defaultToolEffect: ToolEffect;
  readonly enabledBuiltInTools: readonly string[];
  readonly sessionSettings: JsonObject;
  readonly interactionMode: InteractionMode;
  readonly plan: AgentPlan | undefined;
  readonly contextSummary: ContextSummary | undefined;
  readonly events: EventWriter;
  /** Tells Dex the attempt is alive (the host also beats on a timer). */
  heartbeat(): Promise<void>;
  /** Aborts when `cancel_turn` cancels the RunModel Step or its deadline passes. */
  readonly cancellationSignal: AbortSignal;
  /** The session's `toolPolicies` win over what the framework declares. */
  resolveToolPolicy(
    toolName: string,
    frameworkEffect?: ToolEffect,
    frameworkRequiresApproval?: boolean,
  ): ResolvedToolPolicy;
}

/** One attempt of a tool Step: run the real tool once. */
export interface DeferredToolExecution {
  readonly flowId: string;
  readonly turnId: string;
  readonly toolCall: AgentToolCall;
  /** `<flowId>/<turnId>/<toolCallId>`, the same on every attempt. */
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  /** Saves a handle (e.g. a started task) that a retried attempt reads back. */
  saveHeartbeatCheckpoint(checkpoint: string): Promise<void>;
  readonly heartbeatCheckpoint: string | undefined;
  readonly inputAnswers: readonly QuestionAnswer[];
  /** Whether the runner polls tasks; without it, finish inside the call. */
  readonly supportsToolTasks: boolean;
  readonly cancellationSignal: AbortSignal;
}

/** The tool's output, shown to the model as is (`toolResult`). */
export type ToolExecutionResult = RunnerToolResult;

/** The tool needs the user's answer before it takes any effect (`toolInputRequested`). */
export type ToolInputRequested = RunnerToolInputRequested;

/** The tool started remote work that `pollToolTask` follows (`toolTaskStarted`). */
export type ToolTaskStarted = RunnerToolTaskStarted;

export type DeferredToolOutcome = ToolExecutionResult | ToolInputRequested | ToolTaskStarted;

/** A tool failure the model should see; recorded `failed`, never retried. */
export class ToolExecutionError extends Error {
  override name = "ToolExecutionError";
}

/** The task still runs; poll again after the interval (`toolTaskPending`). */
export type ToolTaskPending = RunnerToolTaskPending;

export type ToolTaskPollOutcome = ToolExecutionResult | ToolInputRequested | ToolTaskPending;

/** One poll of a started task. */
export interface ToolTaskPoll {
  readonly flowId: string;
  readonly toolCall: AgentToolCall;
  readonly idempotencyKey: string;
  readonly attempt: number;
  readonly inputAnswers: readonly QuestionAnswer[];
  readonly pendingAnswer: QuestionAnswer | undefined;
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  readonly cancellationSignal: AbortSignal;
}

/** A best-effort cancel of a task that `cancel_turn` abandoned; idempotent by task ID. */
export interface ToolTaskCancellation {
  readonly flowId: string;
  readonly toolCall: AgentToolCall;
  readonly idempotencyKey: string;
  readonly attempt: number;
  heartbeat(): Promise<void>;
  readonly cancellationSignal: AbortSignal;
}

/** One summary model call over older context. */
export interface ContextSummaryRequest {
  readonly flowId: string;
  readonly turnId: string;
  readonly attempt: number;
  readonly previousSummary: ContextSummary | undefined;
  readonly messages: readonly AgentMessage[];
  readonly throughSequence: number;
  readonly inputTokenBudget: number;
  readonly sessionSettings: JsonObject;
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  readonly cancellationSignal: AbortSignal;
}

/** The summary's text, with its model call's usage and metadata. */
export type ContextSummaryResult = RunnerContextSummary;

/**
 * A framework adapter: one model call per Step, tools deferred to their own
 * Steps. The optional methods are the optional capabilities; the session calls
 * one only when `describe()` declares its capability.
 */
export interface AgentFrameworkRunner<ToolOutcome = ToolExecutionResult> {
  /**
   * What the runner supports, each gap with its reason (`declareCapabilities`);
   * without it, the capabilities its optional methods imply.
   */
  describe?(): RunnerCapabilities;
  buildUserMessage(text: string): FrameworkMessage | Promise<FrameworkMessage>;
  /** At most one model call; runs no tool that can be deferred. */
  runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome>;
  /** Runs the real tool once; throw ToolExecutionError for a failure the model sees. */
  executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolOutcome>;
  buildUnfinishedTurnMessages?(
    turn: AgentTurnContext,
  ): readonly FrameworkMessage[] | Promise<readonly FrameworkMessage[]>;
  pollToolTask?(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome>;
  cancelToolTask?(cancellation: ToolTaskCancellation): Promise<void>;
  estimateInputTokens?(turn: AgentTurnContext): number | Promise<number>;
  selectCompactionCutoff?(
    turn: AgentTurnContext,
    retainedTokenBudget: number,
  ): number | undefined | Promise<number | undefined>;
  summarizeContext?(request: ContextSummaryRequest): Promise<ContextSummaryResult>;
  readonly supportsPlanMode?: boolean;
}
