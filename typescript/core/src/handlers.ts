/**
 * One handler per runner service method: the wire request to the runner's
 * call, and its answer to the wire outcome frame.
 *
 * @module
 */

import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  BuildUnfinishedTurnMessagesResponseSchema,
  BuildUserMessageResponseSchema,
  CancelToolTaskResponseSchema,
  DescribeRunnerResponseSchema,
  EstimateInputTokensResponseSchema,
  ExecuteDeferredToolCallResponseSchema,
  PollToolTaskResponseSchema,
  RunModelStepResponseSchema,
  RunnerToolErrorSchema,
  SelectCompactionCutoffResponseSchema,
  SummarizeContextResponseSchema,
  type BuildUnfinishedTurnMessagesRequest,
  type BuildUserMessageRequest,
  type CancelToolTaskRequest,
  type EstimateInputTokensRequest,
  type ExecuteDeferredToolCallRequest,
  type PollToolTaskRequest,
  type RunModelStepRequest,
  type RunModelStepResponse,
  type RunnerSessionOptions,
  type RunnerTurnContext,
  type SelectCompactionCutoffRequest,
  type SummarizeContextRequest,
} from "@dex-agents/contracts";
import {
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolOutcome,
  type EventWriter,
  type ToolTaskPollOutcome,
} from "./runner.js";
import { describeRunner } from "./capabilities.js";
import {
  isToolCallsRequested,
  isToolInputRequested,
  isToolResult,
  isToolTaskPending,
  isToolTaskStarted,
  isTurnCompleted,
  isTurnContinued,
} from "./values.js";
import { turnContext } from "./wire.js";

/** What the host gives a call: its signal, its event writer and its heartbeats. */
export interface StreamFrames {
  readonly signal: AbortSignal;
  readonly events: EventWriter;
  heartbeat(): Promise<void>;
  saveCheckpoint(checkpoint: string): Promise<void>;
}

export type Handler = (
  runner: AgentFrameworkRunner<DeferredToolOutcome>,
  request: never,
  frames: StreamFrames,
  /** The served Flow type's session options, which only DescribeRunner reports. */
  sessionOptions: RunnerSessionOptions | undefined,
) => Promise<MessageShape<DescMessage>>;

function turn(wire: RunnerTurnContext | undefined, frames: StreamFrames): AgentTurnContext {
  if (wire === undefined) throw new TypeError("the request carries no turn");
  return turnContext(wire, {
    events: frames.events,
    heartbeat: () => frames.heartbeat(),
    cancellationSignal: frames.signal,
  });
}

/** A tool outcome as the fields of a tool response frame; ToolExecutionError is model-visible. */
async function toolFrame(
  outcome: () => Promise<DeferredToolOutcome | ToolTaskPollOutcome>,
): Promise<Record<string, unknown>> {
  let value: DeferredToolOutcome | ToolTaskPollOutcome;
  try {
    value = await outcome();
  } catch (error) {
    if (error instanceof ToolExecutionError) {
      return { toolError: create(RunnerToolErrorSchema, { message: error.message }) };
    }
    throw error;
  }
  if (isToolResult(value)) return { result: value };
  if (isToolInputRequested(value)) return { inputRequested: value };
  if (isToolTaskStarted(value)) return { taskStarted: value };
  if (isToolTaskPending(value)) return { taskPending: value };
  throw new TypeError(
    `a tool call answered ${describeValue(value)}; expected a toolResult, toolInputRequested or toolTaskStarted value`,
  );
}

/** What a runner answered, for an error: its message type, or its JSON. */
function describeValue(value: unknown): string {
  const typeName = (value as { $typeName?: unknown } | null | undefined)?.$typeName;
  return typeof typeName === "string" ? typeName : JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? String(v) : v));
}

function missing(runner: AgentFrameworkRunner<DeferredToolOutcome>, method: string): Error {
  return new TypeError(`the runner ${runner.constructor.name} does not implement ${method}`);
}

/** A runner's `runModelStep` answer as the RunModelStep outcome frame. */
export function runModelStepResponse(outcome: AgentTurnOutcome): RunModelStepResponse {
  if (isTurnCompleted(outcome)) return create(RunModelStepResponseSchema, { turnCompleted: outcome });
  if (isToolCallsRequested(outcome)) return create(RunModelStepResponseSchema, { toolCallsRequested: outcome });
  if (isTurnContinued(outcome)) return create(RunModelStepResponseSchema, { turnContinued: outcome });
  throw new TypeError(
    `runModelStep answered ${describeValue(outcome)}; expected a turnCompleted, toolCallsRequested or turnContinued value`,
  );
}

export const handlers: Readonly<Record<string, Handler>> = {
  DescribeRunner: async (runner, _request, _frames, sessionOptions) => {
    const capabilities = describeRunner(runner);
    return create(DescribeRunnerResponseSchema, {
      // Fields 1-5, for a Worker that predates `capabilities`.
      buildsUnfinishedTurnMessages: capabilities.unfinishedTurnMessages,
      pollsToolTasks: capabilities.toolTaskPolls,
      cancelsToolTasks: capabilities.toolTaskCancels,
      compactsContext: capabilities.compaction,
      supportsPlanMode: capabilities.planMode,
      capabilities,
      sessionOptions,
    });
  },

  BuildUserMessage: async (runner, request: BuildUserMessageRequest) =>
    create(BuildUserMessageResponseSchema, { message: await runner.buildUserMessage(request.text) }),

  RunModelStep: async (runner, request: RunModelStepRequest, frames) =>
    runModelStepResponse(await runner.runModelStep(turn(request.turn, frames))),

  ExecuteDeferredToolCall: async (runner, request: ExecuteDeferredToolCallRequest, frames) => {
    const toolCall = request.toolCall;
    if (toolCall === undefined) throw new TypeError("the request carries no tool call");
    const fields = await toolFrame(() =>
      runner.executeDeferredToolCall({
        flowId: request.flowId,
        turnId: request.turnId,
        toolCall,
        idempotencyKey: request.idempotencyKey,
        attempt: request.attempt,
        events: frames.events,
        heartbeat: () => frames.heartbeat(),
        saveHeartbeatCheckpoint: (checkpoint) => frames.saveCheckpoint(checkpoint),
        heartbeatCheckpoint: request.heartbeatCheckpoint,
        inputAnswers: request.inputAnswers,
        supportsToolTasks: request.supportsToolTasks,
        cancellationSignal: frames.signal,
      }),
    );
    if ("taskPending" in fields) throw new TypeError("a tool call cannot answer task_pending");
    return create(ExecuteDeferredToolCallResponseSchema, fields);
  },

  PollToolTask: async (runner, request: PollToolTaskRequest, frames) => {
    const poll = runner.pollToolTask?.bind(runner);
    const toolCall = request.toolCall;
    if (poll === undefined) throw missing(runner, "pollToolTask");
    if (toolCall === undefined) throw new TypeError("the request carries no tool call");
    const fields = await toolFrame(() =>
      poll({
        flowId: request.flowId,
        toolCall,
        idempotencyKey: request.idempotencyKey,
        attempt: request.attempt,
        inputAnswers: request.inputAnswers,
        pendingAnswer: request.pendingAnswer,
        events: frames.events,
        heartbeat: () => frames.heartbeat(),
        cancellationSignal: frames.signal,
      }),
    );
    if ("taskStarted" in fields) throw new TypeError("a poll cannot answer task_started");
    return create(PollToolTaskResponseSchema, fields);
  },

  CancelToolTask: async (runner, request: CancelToolTaskRequest, frames) => {
    const cancel = runner.cancelToolTask?.bind(runner);
    const toolCall = request.toolCall;
    if (cancel === undefined) throw missing(runner, "cancelToolTask");
    if (toolCall === undefined) throw new TypeError("the request carries no tool call");
    await cancel({
      flowId: request.flowId,
      toolCall,
      idempotencyKey: request.idempotencyKey,
      attempt: request.attempt,
      heartbeat: () => frames.heartbeat(),
      cancellationSignal: frames.signal,
    });
    return create(CancelToolTaskResponseSchema, { cancelled: true });
  },

  EstimateInputTokens: async (runner, request: EstimateInputTokensRequest, frames) => {
    const estimate = runner.estimateInputTokens?.bind(runner);
    if (estimate === undefined) throw missing(runner, "estimateInputTokens");
    const tokens = await estimate(turn(request.turn, frames));
    return create(EstimateInputTokensResponseSchema, { inputTokens: BigInt(Math.ceil(tokens)) });
  },

  SelectCompactionCutoff: async (runner, request: SelectCompactionCutoffRequest, frames) => {
    const select = runner.selectCompactionCutoff?.bind(runner);
    if (select === undefined) throw missing(runner, "selectCompactionCutoff");
    const cutoff = await select(turn(request.turn, frames), Number(request.retainedTokenBudget));
    return create(SelectCompactionCutoffResponseSchema, {
      cutoffSequence: cutoff === undefined ? undefined : BigInt(cutoff),
    });
  },

  SummarizeContext: async (runner, request: SummarizeContextRequest, frames) => {
    const summarize = runner.summarizeContext?.bind(runner);
    if (summarize === undefined) throw missing(runner, "summarizeContext");
    const result = await summarize({
      flowId: request.flowId,
      turnId: request.turnId,
      attempt: request.attempt,
      previousSummary: request.previousSummary,
      messages: request.messages,
      throughSequence: Number(request.throughSequence),
      inputTokenBudget: Number(request.inputTokenBudget),
      sessionSettings: request.sessionSettings ?? {},
      events: frames.events,
      heartbeat: () => frames.heartbeat(),
      cancellationSignal: frames.signal,
    });
    return create(SummarizeContextResponseSchema, { summary: result });
  },

  BuildUnfinishedTurnMessages: async (runner, request: BuildUnfinishedTurnMessagesRequest, frames) => {
    const build = runner.buildUnfinishedTurnMessages?.bind(runner);
    if (build === undefined) throw missing(runner, "buildUnfinishedTurnMessages");
    const messages = await build(turn(request.turn, frames));
    return create(BuildUnfinishedTurnMessagesResponseSchema, { messages: [...messages] });
  },
};
