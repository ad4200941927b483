/**
 * `OpenAiAgentsRunner`: an OpenAI Agents SDK (JS) agent on the session Flow, in Step mode.
 *
 * Every function tool of the agent graph is gated with `needsApproval` (see
 * `gating.ts`), so a run stops with `result.interruptions` right after the
 * model call that asked for tools, before any tool runs. The runner returns
 * `RunState.toString()` and one Dex tool call per interruption. The next
 * RunModel restores the state with `RunState.fromString`, approves each
 * interruption whose record succeeded (or whose outcome is unknown), while the
 * gated tool body returns the stored result, and rejects failed and rejected
 * calls with the text the model should see; the SDK then makes the next model
 * call. A handoff is not a tool: the SDK runs it and the next agent's model
 * call in the same Step, reported with an `openai_agents.handoff` event.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { TextDeltaPayloadSchema, ToolCallStatus, type AgentToolCall } from "@dex-agents/contracts";
import {
  ToolRouter,
  isFinal,
  modelVisibleResult,
  NO_RESULT_TEXT,
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolCall,
  type DeferredToolExecution,
  type FrameworkMessage,
  type ModelCallMetadataInit,
  type UsageCounts,
  type ToolExecutionResult,
  type ToolPolicy,
  declareCapabilities,
  type RunnerCapabilities,
  TurnFailed,
  runInfoOfToolStep,
  withRunInfo,
  withStoredResults,
  type DexRunInfo,
  turnCompleted,
  toolCallsRequested,
  toolResult,
  resultText,
} from "@dex-agents/core";
import {
  InputGuardrailTripwireTriggered,
  invokeFunctionTool,
  MaxTurnsExceededError,
  OutputGuardrailTripwireTriggered,
  RunContext,
  Runner,
  RunState,
  type Agent,
  type AgentInputItem,
  type ModelResponse,
  type RunItem,
  type RunToolApprovalItem,
} from "@openai/agents";
import { GatedGraph } from "./gating.js";
import { storedMessage, toolOutputItem, userItem } from "./items.js";
import { decodeTurnState, encodeTurnState, type PendingCall, type TurnState } from "./state.js";

/** The adapter event a RunModel Step writes for each handoff the SDK ran in it. */
export const HANDOFF_EVENT = "openai_agents.handoff";

export interface OpenAiAgentsRunnerOptions {
  /** The starting agent; the runner gates copies of its function tools, never the application's. */
  readonly agent: Agent<any, any>;
  /**
   * Each tool's effect and approval, by name (the SDK declares no effects);
   * it wins over the tool's own `needsApproval`, and the session's
   * `toolPolicies` win over it. A tool without one has the session's
   * `defaultToolEffect`.
   */
  readonly toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /** The SDK's model-call budget for one Dex turn, counted across Steps (the state carries it). */
  readonly maxTurns?: number;
  /** Run each model call streamed and write `text_delta` events (default true). */
  readonly stream?: boolean;
}

type AnyRunState = RunState<unknown, Agent<any, any>>;
type Result = {
  readonly input: string | AgentInputItem[];
  readonly history: AgentInputItem[];
  readonly newItems: RunItem[];
  readonly rawResponses: ModelResponse[];
  readonly interruptions: RunToolApprovalItem[];
  readonly state: AnyRunState;
  readonly lastAgent: Agent<any, any> | undefined;
};

const APPROVED = new Set([ToolCallStatus.SUCCEEDED, ToolCallStatus.OUTCOME_UNKNOWN]);

export class OpenAiAgentsRunner implements AgentFrameworkRunner<ToolExecutionResult> {
  readonly #options: OpenAiAgentsRunnerOptions;
  readonly #graph: GatedGraph;
  readonly #runner = new Runner({ tracingDisabled: true });

  constructor(options: OpenAiAgentsRunnerOptions) {
    if (options.maxTurns !== undefined && options.maxTurns < 1) {
      throw new RangeError(`maxTurns must be at least 1, got ${options.maxTurns}`);
    }
    this.#options = options;
    this.#graph = new GatedGraph(options.agent);
  }

  /** What this adapter supports, each gap with its reason (docs/adapters.md). */
  describe(): RunnerCapabilities {
    return declareCapabilities({
      supported: [
        "text_deltas",
        "usage",
        "structured_output",
        "handoffs",
        "parallel_deferred_calls",
        "tool_cancellation",
        "tracing",
        "unfinished_turn_messages",
      ],
      unsupported: {
        reasoning_deltas: "not implemented: the runner writes text_delta events only",
        built_in_tools: "not offered: the runner does not add the session's built-ins to the agent's tools",
        mcp_sources: "McpToolSource is Python-only, and an agent with mcpServers is refused",
        mcp_tasks: "no tool sources, so no MCP tasks",
        plan_mode: "not implemented",
        compaction: "not implemented",
        tool_task_polls: "not implemented: the runner has no pollToolTask",
        tool_task_cancels: "not implemented: the runner has no cancelToolTask",
      },
    });
  }

  buildUserMessage(text: string): FrameworkMessage {
    return storedMessage(userItem(text));
  }

  /** A state or guardrail it cannot get past throws `RunStateError` / `TurnFailed`, which end the turn. */
  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const previous = decodeTurnState(turn.frameworkRunState);
    const info: DexRunInfo = { flowId: turn.flowId, turnId: turn.turnId, attempt: turn.attempt };
    let input: AgentInputItem[] | AnyRunState;
    let results = new Map<string, string>();
    if (previous === undefined) {
      input = turn.messages.map((m) => JSON.parse(m.frameworkItem) as AgentInputItem);
    } else {
      let state: AnyRunState;
      try {
        state = await RunState.fromString(this.#graph.start, previous.sdkState);
      } catch (error) {
        throw new TurnFailed(
          `cannot resume the turn: the OpenAI Agents SDK refused the stored RunState: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      results = answerInterruptions(state, turn.toolCalls);
      input = state;
    }
    const result = await withRunInfo(info, () => withStoredResults(results, () => this.#run(turn, input)));

    const responses = result.rawResponses.slice(previous?.responses ?? 0);
    for (const item of result.newItems.slice(previous?.runItems ?? 0)) {
      if (item.type === "handoff_output_item") {
        turn.events.writeRaw(
          HANDOFF_EVENT,
          JSON.stringify({ from_agent: item.sourceAgent.name, to_agent: item.targetAgent.name }),
        );
      }
    }
    const items = turnItems(result);
    const usage = usageOf(responses);
    const modelCallMetadata = metadataOf(result.lastAgent, responses);
    if (result.interruptions.length > 0) {
      const { pending, calls } = await this.#deferredCalls(turn, result.interruptions);
      return toolCallsRequested({
        frameworkRunState: encodeTurnState({
          sdkState: result.state.toString(),
          pending,
          items,
          responses: result.rawResponses.length,
          runItems: result.newItems.length,
        }),
        toolCalls: calls,
        usage,
        modelCallMetadata,
      });
    }
    return turnCompleted({ newMessages: items.map(storedMessage), usage, modelCallMetadata });
  }

  async #run(turn: AgentTurnContext, input: AgentInputItem[] | AnyRunState): Promise<Result> {
    const options = {
      signal: turn.cancellationSignal,
      ...(this.#options.maxTurns !== undefined ? { maxTurns: this.#options.maxTurns } : {}),
    };
    try {
      if (this.#options.stream === false) {
        return await this.#runner.run(this.#graph.start, input, options);
      }
      const streamed = await this.#runner.run(this.#graph.start, input, { ...options, stream: true });
      for await (const event of streamed) {
        if (event.type === "raw_model_stream_event" && event.data.type === "output_text_delta") {
          turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: event.data.delta }) });
        }
      }
      await streamed.completed;
      if (streamed.error !== undefined && streamed.error !== null) throw streamed.error;
      if (turn.cancellationSignal.aborted) throw abortReason(turn.cancellationSignal);
      return streamed;
    } catch (error) {
      if (error instanceof InputGuardrailTripwireTriggered) {
        throw guardrailFailure("input", error.result.guardrail.name, error.result.output.outputInfo);
      }
      if (error instanceof OutputGuardrailTripwireTriggered) {
        throw guardrailFailure("output", error.result.guardrail.name, error.result.output.outputInfo);
      }
      if (error instanceof MaxTurnsExceededError) throw new TurnFailed(`OpenAI Agents SDK: ${error.message}`);
      throw error;
    }
  }

  async #deferredCalls(
    turn: AgentTurnContext,
    interruptions: readonly RunToolApprovalItem[],
  ): Promise<{ pending: PendingCall[]; calls: DeferredToolCall[] }> {
    const pending: PendingCall[] = [];
    const calls: DeferredToolCall[] = [];
    const router = new ToolRouter(turn);
    for (const item of interruptions) {
      const raw = item.rawItem;
      if (raw.type !== "function_call") {
        throw new Error(`the model's ${raw.type} needs approval but is not a function tool; OpenAiAgentsRunner defers function tools only`);
      }
      const tool = this.#graph.tools.get(raw.name);
      if (tool === undefined) {
        throw new Error(`the model called ${JSON.stringify(raw.name)}, which is not a function tool of the agent graph`);
      }
      const args = raw.arguments === "" ? "{}" : raw.arguments;
      const declared = this.#options.toolPolicies?.[raw.name];
      pending.push({ toolCallId: raw.callId, toolName: raw.name });
      calls.push(
        router.defer({
          toolCallId: raw.callId,
          toolName: raw.name,
          arguments: args,
          frameworkEffect: declared?.effect,
          frameworkRequiresApproval: declared?.requiresApproval ?? (await ownApproval(tool.needsApproval, args, raw.callId)),
        }),
      );
    }
    return { pending, calls };
  }

  /**
   * A turn that ends without an answer keeps its transcript: the turn's items,
   * with a function call result for every pending call (`NO_RESULT_TEXT` for
   * a call that never finished).
   */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    let state: TurnState | undefined;
    try {
      state = decodeTurnState(turn.frameworkRunState);
    } catch {
      return [];
    }
    if (state === undefined) return [];
    const byId = new Map(turn.toolCalls.map((r) => [r.toolCallId, r]));
    const items = [...state.items];
    for (const call of state.pending) {
      const record = byId.get(call.toolCallId);
      const text = resultText(record);
      items.push(toolOutputItem(call.toolCallId, call.toolName, text));
    }
    return items.map(storedMessage);
  }

  /**
   * Runs the real tool once through the SDK (`invokeFunctionTool`: argument
   * parsing, the tool's timeout and its own error formatting). The tool reads
   * its Step, idempotency key included, with `dexRunInfo()`.
   */
  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    const record = call.toolCall;
    const tool = this.#graph.tools.get(record.toolName);
    if (tool === undefined) {
      throw new ToolExecutionError(`this agent has no function tool named ${JSON.stringify(record.toolName)}`);
    }
    await call.heartbeat();
    const output = await withRunInfo(runInfoOfToolStep(call), () =>
      invokeFunctionTool({
        tool,
        runContext: new RunContext(),
        input: record.arguments,
        details: {
          toolCall: { type: "function_call", callId: record.toolCallId, name: record.toolName, arguments: record.arguments },
          signal: call.cancellationSignal,
        },
      }),
    );
    return toolResult(typeof output === "string" ? output : JSON.stringify(output));
  }
}

/**
 * Approves the calls whose tool ran (the gated body returns the stored
 * result) and rejects the rest with the text the model sees; returns the
 * stored results by call ID.
 */
function answerInterruptions(state: AnyRunState, records: readonly AgentToolCall[]): Map<string, string> {
  const byId = new Map(records.map((r) => [r.toolCallId, r]));
  const results = new Map<string, string>();
  for (const item of state.getInterruptions()) {
    const callId = "callId" in item.rawItem ? item.rawItem.callId : undefined;
    const record = callId === undefined ? undefined : byId.get(callId);
    if (record === undefined || !isFinal(record.status)) {
      state.reject(item, { message: NO_RESULT_TEXT });
      continue;
    }
    const text = modelVisibleResult(record);
    if (APPROVED.has(record.status)) {
      results.set(record.toolCallId, text);
      state.approve(item);
    } else {
      state.reject(item, { message: text });
    }
  }
  return results;
}

/**
 * The turn's input items so far: what the run added to its original input.
 * At an interruption the SDK's `history` leaves out the calls that wait for
 * approval (they have no output yet), so those are added from the run items.
 */
function turnItems(result: Result): AgentInputItem[] {
  const original = result.input;
  const items = result.history.slice(Array.isArray(original) ? original.length : 1);
  if (result.interruptions.length === 0) return items;
  const present = new Set(items.flatMap((i) => (i.type === "function_call" ? [i.callId] : [])));
  for (const item of result.newItems) {
    if (item.type === "tool_call_item" && item.rawItem.type === "function_call" && !present.has(item.rawItem.callId)) {
      items.push(item.rawItem);
    }
  }
  return items;
}

/** The tool's own `needsApproval` for this call: it can only add an approval. */
async function ownApproval(
  needsApproval: (context: RunContext, input: any, callId?: string) => Promise<boolean>,
  args: string,
  callId: string,
): Promise<boolean | undefined> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return true; // arguments the tool cannot inspect
  }
  return (await needsApproval(new RunContext(), parsed, callId)) ? true : undefined;
}

function guardrailFailure(kind: string, name: string, info: unknown): TurnFailed {
  const detail = info === undefined || info === null ? "" : `: ${typeof info === "string" ? info : JSON.stringify(info)}`;
  return new TurnFailed(`${kind} guardrail '${name}' tripped its tripwire${detail}`);
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("the model call was aborted");
}

function detail(details: readonly Record<string, number>[], key: string): number {
  return details.reduce((sum, d) => sum + (d[key] ?? 0), 0);
}

function usageOf(responses: readonly ModelResponse[]): UsageCounts {
  let inputTokens = 0;
  let outputTokens = 0;
  let cachedInputTokens = 0;
  let reasoningTokens = 0;
  for (const { usage } of responses) {
    inputTokens += usage.inputTokens;
    outputTokens += usage.outputTokens;
    cachedInputTokens += detail(usage.inputTokensDetails, "cached_tokens");
    reasoningTokens += detail(usage.outputTokensDetails, "reasoning_tokens");
  }
  return { modelCalls: responses.length, inputTokens, outputTokens, cachedInputTokens, reasoningTokens };
}

function metadataOf(agent: Agent<any, any> | undefined, responses: readonly ModelResponse[]): ModelCallMetadataInit {
  const model = agent?.model;
  const name = typeof model === "string" && model !== "" ? model : undefined;
  return {
    requestModel: name,
    responseModel: name,
    providerName: "openai",
    responseId: responses.at(-1)?.responseId,
  };
}
