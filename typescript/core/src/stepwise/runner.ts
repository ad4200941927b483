/**
 * `StepwiseRunner`: the built-in agent loop in TypeScript, one model call per
 * RunModel Step, as `dex_agents.stepwise.StepwiseRunner` runs it in Python.
 * Every tool call is deferred to its own tool Step; the turn's unstored items
 * travel in the run state and stored messages replay from `frameworkItem`,
 * so nothing re-runs and application code needs no determinism.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import {
  PlanStatus,
  ReasoningDeltaPayloadSchema,
  TextDeltaPayloadSchema,
  ToolCallStatus,
  type AgentToolCall,
  type RunnerCapabilities,
} from "@dex-agents/contracts";
import { declareCapabilities, type Capability } from "../capabilities.js";
import { isFinal, resultText } from "../results.js";
import {
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type ContextSummaryRequest,
  type ContextSummaryResult,
  type DeferredToolCall,
  type DeferredToolExecution,
  type DeferredToolOutcome,
  type FrameworkMessage,
  type ToolTaskCancellation,
  type ToolTaskPoll,
  type ToolTaskPollOutcome,
  type Usage,
} from "../runner.js";
import { buildSummaryMessages, estimateItems, selectCutoff, SUMMARY_PREFIX } from "./compaction.js";
import {
  MAX_CONSECUTIVE_CONTINUATIONS,
  tooManyContinuations,
  type TurnContinuationDecision,
} from "./continuation.js";
import type { AgentDefinition, StepwiseTool } from "./definition.js";
import { RunStateError } from "../errors.js";
import { itemFromMessage, itemsToModelMessages, itemToMessage, type Item } from "./items.js";
import type { ModelClient, ModelResponse, ModelToolChoice, ModelUsage, ToolSpec } from "./model.js";
import { checkStructuredOutput, DEFAULT_OUTPUT_RETRIES, outputRetriesSpent } from "./output.js";
import { buildPlanNote, isPlanning, turnBuiltIns } from "../plan_mode.js";
import { isTaskToolSource, type TaskToolSource } from "./sources.js";
import { decodeRunState, encodeRunState, STEPWISE_RUN_STATE, unansweredToolCalls, type RunState } from "./state.js";
import type { RunStateFormat } from "../run_state.js";
import { parseToolArguments, toolOutputText } from "../tool_values.js";
import { runInfoOfToolStep, withRunInfo } from "../run_info.js";
import { ToolRouter } from "../routing.js";
import { contextSummary, deferredToolCall, modelUsage, toolCallsRequested, toolResult, turnCompleted, turnContinued } from "../values.js";

const WRITE_TODOS = "write_todos";

/** The model's response breaks a rule the session relies on; the RunModel attempt fails. */
export class InvalidModelResponseError extends Error {
  override name = "InvalidModelResponseError";
  constructor(
    message: string,
    readonly toolCallId: string,
    readonly toolName: string,
  ) {
    super(message);
  }
}

/**
 * What the TypeScript loop supports; a runner built on it (Mastra, Pi) starts
 * from this and takes out, with `stepwiseCapabilitiesWithout`, what its
 * options do not offer.
 */
export const STEPWISE_CAPABILITIES = {
  supported: [
    "text_deltas",
    "reasoning_deltas",
    "usage",
    "built_in_tools",
    "mcp_sources",
    "mcp_tasks",
    "structured_output",
    "plan_mode",
    "compaction",
    "parallel_deferred_calls",
    "tool_cancellation",
    "tracing",
    "unfinished_turn_messages",
    "tool_task_polls",
    "tool_task_cancels",
  ],
  unsupported: {
    handoffs: "one AgentDefinition per runner; the loop has no handoff",
  },
} as const satisfies Parameters<typeof declareCapabilities>[0];

/** The loop's capabilities less `gaps`, each with the reason the runner lacks it. */
export function stepwiseCapabilitiesWithout(gaps: Readonly<Partial<Record<Capability, string>>>): RunnerCapabilities {
  return declareCapabilities({
    supported: STEPWISE_CAPABILITIES.supported.filter((c) => !(c in gaps)),
    unsupported: { ...STEPWISE_CAPABILITIES.unsupported, ...gaps },
  });
}

export class StepwiseRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly supportsPlanMode = true;
  /** The tool sources' tools, listed once per runner (that is, per Worker process). */
  #sourceTools: Promise<readonly StepwiseTool[]> | undefined;
  /** The same, once listed, for the synchronous token estimate. */
  #listed: readonly StepwiseTool[] = [];

  readonly #runState: RunStateFormat;

  /** `runState`: the envelope an adapter built on the loop writes (`stepwiseRunStateFormat`); `stepwise` by default. */
  constructor(
    readonly definition: AgentDefinition,
    runState: RunStateFormat = STEPWISE_RUN_STATE,
  ) {
    this.#runState = runState;
  }

  describe(): RunnerCapabilities {
    return declareCapabilities(STEPWISE_CAPABILITIES);
  }

  buildUserMessage(text: string): FrameworkMessage {
    return itemToMessage({ type: "user", text });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const state = decodeRunState(turn.frameworkRunState, this.#runState);
    const pending: Item[] = [...state.items, ...resultsFor(state, turn.toolCalls, true)];
    const continuations = state.consecutiveContinuations;
    const outputRetries = state.outputRetries ?? 0;
    const decision = state.afterToolCalls;
    if (decision === "end") return turnCompleted({ newMessages: pending.map(itemToMessage) });
    if (decision !== undefined) {
      if (continuations > MAX_CONSECUTIVE_CONTINUATIONS) {
        return turnCompleted({ newMessages: pending.map(itemToMessage), turnError: tooManyContinuations() });
      }
      pending.push({ type: "user", text: decision.continueWith });
    }

    const client = this.definition.resolveModel(turn.sessionSettings);
    const tools = await this.#tools();
    const offered = this.#offeredTools(turn, tools);
    const toolChoice = this.#toolChoice(turn, offered, client);
    if (toolChoice === undefined) {
      return turnCompleted({
        newMessages: [],
        turnError:
          "planning_tool_choice='required' needs a model client whose " +
          "supportsForcedToolChoice(settings) is true; this client refuses a forced tool choice for these settings",
      });
    }
    const response = await client.complete({
      instructions: await this.definition.renderInstructions({
        sessionSettings: turn.sessionSettings,
        flowId: turn.flowId,
        turnId: turn.turnId,
        interactionMode: turn.interactionMode,
      }),
      messages: itemsToModelMessages(this.#modelInput(turn, pending)),
      tools: offered,
      toolChoice,
      sessionSettings: turn.sessionSettings,
      signal: turn.cancellationSignal,
      ...(this.definition.output !== undefined ? { structuredOutput: true } : {}),
      onDelta: (delta) =>
        turn.events.write(
          delta.kind === "text"
            ? { type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: delta.text }) }
            : { type: "reasoning_delta", payload: create(ReasoningDeltaPayloadSchema, { text: delta.text }) },
        ),
    });
    const usage = agentUsage(response.usage);
    const metadata = response.metadata;
    const answer: Item = {
      type: "assistant",
      text: answerText(response, this.definition.output !== undefined),
      ...(response.reasoning !== undefined ? { reasoning: response.reasoning } : {}),
    };

    if (response.toolCalls.length > 0) {
      const calls = this.#deferredCalls(turn, pending, response, tools);
      const items: Item[] = [...pending];
      if (response.text || response.reasoning) items.push(answer);
      for (const call of calls) {
        items.push({ type: "tool_call", tool_call_id: call.toolCallId, tool_name: call.toolName, arguments: call.arguments });
      }
      const after = await this.#decide(turn, response, continuations);
      // A response with tool calls and no continuation breaks the run of continuations.
      const inARow = after !== undefined && after !== "end" ? continuations + 1 : 0;
      return toolCallsRequested({
        frameworkRunState: encodeRunState({ items, consecutiveContinuations: inARow, afterToolCalls: after, outputRetries }, this.#runState),
        toolCalls: calls,
        usage,
        modelCallMetadata: metadata,
      });
    }

    const finished = [...pending, answer];
    const output = this.definition.output;
    const retryPrompt = output === undefined ? undefined : await checkStructuredOutput(output, response);
    if (output !== undefined && retryPrompt !== undefined) {
      const limit = output.maxRetries ?? DEFAULT_OUTPUT_RETRIES;
      if (outputRetries >= limit) {
        return turnCompleted({
          newMessages: finished.map(itemToMessage),
          usage,
          modelCallMetadata: metadata,
          turnError: outputRetriesSpent(limit, retryPrompt),
        });
      }
      // The bad answer and the retry prompt are stored; the next Step asks again.
      return turnContinued({
        frameworkRunState: encodeRunState({
          items: [],
          consecutiveContinuations: continuations,
          afterToolCalls: undefined,
          outputRetries: outputRetries + 1,
        }, this.#runState),
        newMessages: [...finished, { type: "user" as const, text: retryPrompt }].map(itemToMessage),
        usage,
        modelCallMetadata: metadata,
      });
    }
    const after = await this.#decide(turn, response, continuations);
    if (after !== undefined && after !== "end") {
      if (continuations + 1 > MAX_CONSECUTIVE_CONTINUATIONS) {
        return turnCompleted({
          newMessages: finished.map(itemToMessage),
          usage,
          modelCallMetadata: metadata,
          turnError: tooManyContinuations(),
        });
      }
      return turnContinued({
        frameworkRunState: encodeRunState({ items: [], consecutiveContinuations: continuations + 1, afterToolCalls: undefined }, this.#runState),
        newMessages: [...finished, { type: "user" as const, text: after.continueWith }].map(itemToMessage),
        usage,
        modelCallMetadata: metadata,
      });
    }
    return turnCompleted({ newMessages: finished.map(itemToMessage), usage, modelCallMetadata: metadata });
  }

  /**
   * Runs the call's tool; a call a `TaskToolSource` owns goes to that source
   * whole, so it may start a task that `pollToolTask` follows. A sourced tool
   * comes from the record's reference, so the Step needs no listing.
   */
  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const record = call.toolCall;
    const owner = this.#taskSource(record.toolSourceReference);
    if (owner !== undefined) return await owner.executeDeferredToolCall(call);
    const tool = this.#toolForCall(record.toolName, record.toolSourceReference);
    if (tool === undefined) {
      const known = this.definition.tools.map((t) => t.name).join(", ") || "none";
      throw new ToolExecutionError(`unknown tool '${record.toolName}'; this agent's tools are: ${known}`);
    }
    const args = parseToolArguments(record.arguments);
    await call.heartbeat();
    // The body reads its Step's identity from the kit (`dexRunInfo`), whichever framework's tool it is.
    const output = await withRunInfo(runInfoOfToolStep(call), () => tool.execute(args, call));
    return toolResult(toolOutputText(output));
  }

  /** The owning source's poll: only sourced calls start tasks in Stepwise. */
  async pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    const owner = this.#taskSource(poll.toolCall.toolSourceReference);
    if (owner === undefined) {
      // Not a ToolExecutionError: the call is recorded by its effect.
      throw new Error(`no tool source of this agent owns the task of '${poll.toolCall.toolName}'`);
    }
    return await owner.pollToolTask(poll);
  }

  /** Cancels through the owning source; a task nobody owns has nothing to cancel. */
  async cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    await this.#taskSource(cancellation.toolCall.toolSourceReference)?.cancelToolTask(cancellation);
  }

  /** The turn's unstored items, with a result for every tool call they hold. */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    const state = decodeRunState(turn.frameworkRunState, this.#runState);
    return [...state.items, ...resultsFor(state, turn.toolCalls, false)].map(itemToMessage);
  }

  /** The next model input's size: messages, string instructions and tool specs. */
  estimateInputTokens(turn: AgentTurnContext): number {
    const count = this.definition.countTokens;
    const state = decodeRunState(turn.frameworkRunState, this.#runState);
    const pending: Item[] = [...state.items, ...resultsFor(state, turn.toolCalls, false)];
    if (state.afterToolCalls !== undefined && state.afterToolCalls !== "end") {
      pending.push({ type: "user", text: state.afterToolCalls.continueWith });
    }
    let total = estimateItems(this.#modelInput(turn, pending), count);
    if (typeof this.definition.instructions === "string") total += count(this.definition.instructions);
    for (const spec of this.#offeredTools(turn, [...this.definition.tools, ...this.#listed])) {
      total += count(JSON.stringify({ name: spec.name, description: spec.description, parameters: spec.parameters }));
    }
    return total;
  }

  /** Cuts only between model responses whose tool calls all have stored results. */
  selectCompactionCutoff(turn: AgentTurnContext, retainedTokenBudget: number): number | undefined {
    return selectCutoff(turn.messages, retainedTokenBudget, this.definition.countTokens);
  }

  /** One model call that folds the previous summary and the messages into a new one. */
  async summarizeContext(request: ContextSummaryRequest): Promise<ContextSummaryResult> {
    const d = this.definition;
    const budget = request.inputTokenBudget - d.maxOutputTokens - d.countTokens(d.summaryInstructions);
    const messages = buildSummaryMessages({
      previousSummary: request.previousSummary?.text,
      messages: request.messages.filter((m) => Number(m.sequence) <= request.throughSequence),
      budget,
      count: d.countTokens,
    });
    const response = await d.resolveModel(request.sessionSettings).complete({
      instructions: d.summaryInstructions,
      messages,
      tools: [],
      toolChoice: "auto",
      sessionSettings: request.sessionSettings,
      signal: request.cancellationSignal,
      onDelta: () => {},
    });
    return contextSummary({ text: response.text ?? "", usage: agentUsage(response.usage), modelCallMetadata: response.metadata });
  }

  /** The agent's own tools, then the sources' (listed on the first call). */
  async #tools(): Promise<readonly StepwiseTool[]> {
    const sources = this.definition.toolSources;
    if (sources.length === 0) return this.definition.tools;
    this.#sourceTools ??= (async () => {
      const listed: StepwiseTool[] = [];
      for (const source of sources) {
        const taken = [...this.definition.tools, ...listed].map((t) => t.name);
        listed.push(...(await source.stepwiseTools(taken)).filter((t) => !taken.includes(t.name)));
      }
      return listed;
    })();
    this.#listed = await this.#sourceTools;
    return [...this.definition.tools, ...this.#listed];
  }

  #taskSource(reference: string | undefined): TaskToolSource | undefined {
    if (!reference) return undefined;
    return this.definition.toolSources.find((s): s is TaskToolSource => isTaskToolSource(s) && s.owns(reference));
  }

  #toolForCall(name: string, reference: string | undefined): StepwiseTool | undefined {
    if (reference) {
      for (const source of this.definition.toolSources) {
        const tool = source.stepwiseTool(name, reference);
        if (tool !== undefined) return tool;
      }
    }
    return this.definition.toolNamed(name);
  }

  #offeredTools(turn: AgentTurnContext, tools: readonly StepwiseTool[]): ToolSpec[] {
    const builtIns = turnBuiltIns(turn, tools.map((t) => t.name));
    if (isPlanning(turn)) return builtIns;
    const own = tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
    return [...own, ...builtIns];
  }

  /** `auto`, or write_todos forced; undefined when the client refuses the forced choice. */
  #toolChoice(turn: AgentTurnContext, offered: readonly ToolSpec[], client: ModelClient): ModelToolChoice | undefined {
    const forced =
      this.definition.planningToolChoice === "required" &&
      isPlanning(turn) &&
      turn.frameworkRunState === undefined &&
      turn.plan?.status !== PlanStatus.DRAFT &&
      offered.some((s) => s.name === WRITE_TODOS);
    if (!forced) return "auto";
    if (client.supportsForcedToolChoice?.(turn.sessionSettings) !== true) return undefined;
    return { name: WRITE_TODOS };
  }

  /** Summary, stored history with the plan note before the turn, then unstored items. */
  #modelInput(turn: AgentTurnContext, pending: readonly Item[]): Item[] {
    const items: Item[] = [];
    if (turn.contextSummary !== undefined) {
      items.push({ type: "user", text: `${SUMMARY_PREFIX}\n${turn.contextSummary.text}` });
    }
    let note = buildPlanNote(turn.plan, turn.interactionMode);
    for (const message of turn.messages) {
      if (note !== undefined && message.turnId === turn.turnId) {
        items.push({ type: "user", text: note });
        note = undefined;
      }
      items.push(itemFromMessage(message));
    }
    if (note !== undefined) items.push({ type: "user", text: note });
    items.push(...pending);
    return items;
  }

  #deferredCalls(
    turn: AgentTurnContext,
    pending: readonly Item[],
    response: ModelResponse,
    tools: readonly StepwiseTool[],
  ): DeferredToolCall[] {
    const router = new ToolRouter(turn, { takenIds: turnToolCallIds(turn, pending) });
    return response.toolCalls.map((call) => {
      const { toolCallId: id, toolName: name } = call;
      const problem = router.claimId(name, id);
      if (problem !== undefined) throw new InvalidModelResponseError(problem, id, name);
      const tool = tools.find((t) => t.name === name);
      if (tool === undefined && !turn.enabledBuiltInTools.includes(name)) {
        const offered = [...tools.map((t) => t.name), ...turn.enabledBuiltInTools];
        throw new InvalidModelResponseError(
          `the model called tool '${name}' (ID '${id}'), which this agent does not have; ` +
            `its tools are: ${offered.join(", ") || "none"}`,
          id,
          name,
        );
      }
      const policy = router.policy(name, { frameworkEffect: tool?.effect, frameworkRequiresApproval: tool?.requiresApproval });
      return deferredToolCall({ ...call, toolSourceReference: tool?.sourceReference }, policy);
    });
  }

  async #decide(turn: AgentTurnContext, response: ModelResponse, continuations: number): Promise<TurnContinuationDecision> {
    const hook = this.definition.decideTurnContinuation;
    if (hook === undefined) return undefined;
    const result = await hook({
      flowId: turn.flowId,
      turnId: turn.turnId,
      text: response.text,
      toolCalls: response.toolCalls,
      consecutiveContinuations: continuations,
      sessionSettings: turn.sessionSettings,
    });
    if (response.toolCalls.length === 0 && result === "end") return undefined;
    return result;
  }
}

/** The kit's `parseToolArguments`, under the name the Stepwise loop first exported it as. */
export const parseArgumentsObject = parseToolArguments;

function turnToolCallIds(turn: AgentTurnContext, pending: readonly Item[]): Set<string> {
  const ids = new Set<string>();
  for (const item of pending) if (item.type === "tool_call") ids.add(item.tool_call_id);
  for (const m of turn.messages) if (m.turnId === turn.turnId && m.toolCallId) ids.add(m.toolCallId);
  return ids;
}

/**
 * Result items for the state's unanswered calls, from the turn's records.
 * Strict (RunModel, where every record is final) throws for a missing or
 * unfinished record; otherwise such a call gets `NO_RESULT_TEXT` (`resultText`).
 */
function resultsFor(state: RunState, records: readonly AgentToolCall[], strict: boolean): Item[] {
  const byId = new Map(records.map((r) => [r.toolCallId, r]));
  return unansweredToolCalls(state).map((call) => {
    const record = byId.get(call.tool_call_id);
    if (strict && (record === undefined || !isFinal(record.status))) {
      throw new RunStateError(
        record === undefined
          ? `the turn has no tool call record for '${call.tool_call_id}' ('${call.tool_name}'), which the run state is waiting for`
          : `tool call '${call.tool_call_id}' ('${call.tool_name}') is not final: its status is ${ToolCallStatus[record.status].toLowerCase()}`,
      );
    }
    return { type: "tool_result", tool_call_id: call.tool_call_id, tool_name: call.tool_name, output: resultText(record) };
  });
}

/** The answer's text; a structured answer the framework gave only as a value is its JSON. */
function answerText(response: ModelResponse, structured: boolean): string | null {
  if (structured && !response.text && response.output !== undefined) return JSON.stringify(response.output);
  return response.text ?? null;
}

function agentUsage(usage: ModelUsage | undefined): Usage {
  return modelUsage({
    modelCalls: 1,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cachedInputTokens: usage?.cachedInputTokens ?? 0,
    reasoningTokens: usage?.reasoningTokens ?? 0,
  });
}
