/**
 * The runner interface, in camelCase: what a TypeScript framework adapter
 * implements. It mirrors `dex_agents.runner` (design document, "Runner
 * protocol"): one model call per `runModelStep`, every deferrable tool call
 * run by the session in its own Step through `executeDeferredToolCall`.
 * Everything crossing it is plain data plus the event writer, the heartbeat
 * and the cancellation signal.
 *
 * @module
 */

import type {
  AgentEventPayload,
  AgentMessage,
  AgentPlan,
  AgentToolCall,
  ContextSummary,
  InteractionMode,
  QuestionAnswer,
  RunnerCapabilities,
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

/** A message a runner hands the session to store: the AgentMessage projection. */
export interface FrameworkMessage {
  readonly role: "user" | "assistant" | "tool";
  /** The framework's own JSON, replayed to it unchanged on later turns. */
  readonly frameworkItem: string;
  readonly text?: string | undefined;
  readonly toolCallId?: string | undefined;
  readonly toolName?: string | undefined;
  readonly toolArguments?: string | undefined;
  readonly toolOutput?: string | undefined;
}

/** Names and annotates a model call's chat span; never stored. */
export interface ModelCallMetadata {
  readonly requestModel?: string | undefined;
  readonly responseModel?: string | undefined;
  readonly providerName?: string | undefined;
  readonly responseId?: string | undefined;
  readonly finishReasons?: readonly string[] | undefined;
}

/** Model call and token counts; absent counts are zero. */
export interface Usage {
  readonly modelCalls?: number;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly cachedInputTokens?: number;
  readonly reasoningTokens?: number;
}

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

/** A tool call the model asked for, which the session runs in its own Step. */
export interface DeferredToolCall {
  /** Non-empty, without `/`, unique within the turn. */
  readonly toolCallId: string;
  readonly toolName: string;
  /** JSON text of the arguments. */
  readonly arguments: string;
  readonly policy: ResolvedToolPolicy;
  readonly toolSourceReference?: string | undefined;
}

/** The model answered: the turn ends. */
export interface TurnCompleted {
  readonly kind: "turn_completed";
  readonly newMessages: readonly FrameworkMessage[];
  readonly usage?: Usage;
  readonly modelCallMetadata?: ModelCallMetadata | undefined;
  /** Ends the turn as failed, without a retry. */
  readonly turnError?: string | undefined;
}

/** The model asked for tools: the session runs them, then resumes the turn. */
export interface ToolCallsRequested {
  readonly kind: "tool_calls_requested";
  /** Opaque JSON the runner needs to continue the turn. */
  readonly frameworkRunState: string;
  readonly toolCalls: readonly DeferredToolCall[];
  readonly usage?: Usage;
  /** Items stored now; a runner that sets them implements `buildUnfinishedTurnMessages`. */
  readonly newMessages?: readonly FrameworkMessage[];
  readonly modelCallMetadata?: ModelCallMetadata | undefined;
}

/** Make another model call in the same turn. */
export interface TurnContinued {
  readonly kind: "turn_continued";
  readonly frameworkRunState: string;
  readonly newMessages?: readonly FrameworkMessage[];
  readonly usage?: Usage;
  readonly modelCallMetadata?: ModelCallMetadata | undefined;
}

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

/** The tool's output, shown to the model as is. */
export interface ToolExecutionResult {
  readonly kind: "result";
  readonly output: string;
}

/** The tool needs the user's answer before it takes any effect. */
export interface ToolInputRequested {
  readonly kind: "input_requested";
  readonly question: string;
  readonly choices?: readonly string[];
  readonly allowsFreeText?: boolean;
  readonly continuation?: string | undefined;
}

/** The tool started remote work that `pollToolTask` follows. */
export interface ToolTaskStarted {
  readonly kind: "task_started";
  readonly taskId: string;
  readonly pollIntervalSeconds: number;
}

export type DeferredToolOutcome = ToolExecutionResult | ToolInputRequested | ToolTaskStarted;

/** A tool failure the model should see; recorded `failed`, never retried. */
export class ToolExecutionError extends Error {
  override name = "ToolExecutionError";
}

/** The task still runs; poll again after the interval. */
export interface ToolTaskPending {
  readonly kind: "task_pending";
  readonly pollIntervalSeconds: number;
  readonly continuation?: string | undefined;
}

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

export interface ContextSummaryResult {
  readonly text: string;
  readonly usage?: Usage;
  readonly modelCallMetadata?: ModelCallMetadata | undefined;
}

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
