/**
 * `VercelAiRunner`: the Vercel AI SDK on the dex-agents runner interface.
 *
 * Each RunModel Step is one `streamText` call with `stopWhen: isStepCount(1)`
 * whose tools have no `execute`, so the SDK returns the model's tool calls
 * instead of running them; the session runs each in its own Step through
 * `executeDeferredToolCall`. The turn's run state is the plain-JSON
 * `ModelMessage[]` the turn produced after its user message; the tool results
 * go back as one `tool` message with `tool-result` parts. Text and reasoning
 * deltas stream as `text_delta` and `reasoning_delta` events. `streamText` runs the same engine as
 * `generateText`; it is used for the deltas.
 *
 * With `output`, the answer must match an `ai` output spec: one that fails
 * it or the validator ends the Step with `turn_continued`, storing the answer
 * and a user message with the retry prompt, so the retry is a RunModel Step
 * of its own. The accepted answer ends the turn as the assistant message's
 * JSON text.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { ReasoningDeltaPayloadSchema, TextDeltaPayloadSchema, type AgentToolCall, type ToolEffect, MessageRole } from "@dex-agents/contracts";
import {
  ToolRouter,
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolExecution,
  type FrameworkMessage,
  type ToolExecutionResult,
  declareCapabilities,
  parseToolArguments,
  RunStateFormat,
  toolOutputText,
  type RunnerCapabilities,
  turnCompleted,
  toolCallsRequested,
  turnContinued,
  toolResult,
  frameworkMessage,
  resultText,
  runInfoOfToolStep,
  isPlanning,
  turnBuiltIns,
  withPlanNote,
  withRunInfo,
} from "@dex-agents/core";
import {
  isStepCount,
  jsonSchema,
  streamText,
  tool,
  type FlexibleSchema,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
} from "ai";
import { checkOutput, DEFAULT_OUTPUT_RETRIES, type VercelAiOutput } from "./output.js";

/** One tool: the model sees its description and schema; the session runs `execute` in a tool Step. */
export interface VercelAiTool<Input = unknown> {
  readonly description?: string;
  readonly inputSchema: FlexibleSchema<Input>;
  /** What the tool does to the world; the session's `toolPolicies` win over it. */
  readonly effect?: ToolEffect;
  readonly requiresApproval?: boolean;
  /** Runs the tool once; a string is shown to the model as is, anything else as JSON. */
  execute(input: Input, call: DeferredToolExecution): Promise<unknown>;
}

export interface VercelAiRunnerOptions {
  readonly model: LanguageModel;
  /** The tools by name; `any`: each tool types its own input. */
  readonly tools?: Readonly<Record<string, VercelAiTool<any>>>;
  readonly instructions?: string;
  /** Structured output: the answer's spec and validator; plain text when absent. */
  readonly output?: VercelAiOutput<any>;
}

/** The turn's run state: the items since the last stored message, and the output retries in a row. */
interface RunState {
  readonly items: ModelMessage[];
  readonly outputRetries: number;
}

/** Before the envelope the state was the bare items, then `{ items, outputRetries }`. */
function legacyRunState(parsed: unknown): Record<string, unknown> | undefined {
  if (Array.isArray(parsed)) return { items: parsed, outputRetries: 0 };
  const state = parsed as Partial<RunState> | null;
  return typeof state === "object" && state !== null && Array.isArray(state.items) ? { ...state } : undefined;
}

const RUN_STATE = new RunStateFormat({ adapter: "vercel-ai", framework: "ai", legacy: legacyRunState });

function readRunState(payload: Record<string, unknown>): RunState {
  const { items, outputRetries } = payload as Partial<RunState>;
  if (!Array.isArray(items) || typeof outputRetries !== "number") throw new TypeError("items or outputRetries is missing");
  return { items, outputRetries };
}

function parseRunState(text: string | undefined): RunState {
  return text === undefined ? { items: [], outputRetries: 0 } : RUN_STATE.decode(text, readRunState);
}

function encodeRunState(state: RunState): string {
  return RUN_STATE.encode({ items: state.items, outputRetries: state.outputRetries });
}

function storedMessage(message: ModelMessage): FrameworkMessage {
  const item = JSON.stringify(message);
  if (message.role === "user" || message.role === "system") {
    const text = typeof message.content === "string" ? message.content : message.content.map((p) => (p.type === "text" ? p.text : "")).join("");
    return frameworkMessage({ role: MessageRole.USER, frameworkItem: item, text });
  }
  if (message.role === "assistant") {
    const parts = typeof message.content === "string" ? [{ type: "text" as const, text: message.content }] : message.content;
    const text = parts.map((p) => (p.type === "text" ? p.text : "")).join("");
    const calls = parts.filter((p) => p.type === "tool-call");
    const [call] = calls;
    return frameworkMessage({
      role: MessageRole.ASSISTANT,
      frameworkItem: item,
      text: text === "" ? undefined : text,
      ...(calls.length === 1 && call !== undefined
        ? { toolCallId: call.toolCallId, toolName: call.toolName, toolArguments: JSON.stringify(call.input) }
        : {}),
    });
  }
  const results = message.content.filter((p) => p.type === "tool-result");
  const [result] = results;
  return frameworkMessage({
    role: MessageRole.TOOL,
    frameworkItem: item,
    ...(results.length === 1 && result !== undefined
      ? {
          toolCallId: result.toolCallId,
          toolName: result.toolName,
          toolOutput: result.output.type === "text" ? result.output.value : JSON.stringify(result.output),
        }
      : {}),
  });
}

function toolMessage(
  calls: readonly { readonly toolCallId: string; readonly toolName: string }[],
  records: ReadonlyMap<string, AgentToolCall>,
): ModelMessage {
  return {
    role: "tool",
    content: calls.map((call) => {
      const record = records.get(call.toolCallId);
      const value = resultText(record);
      return {
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "text" as const, value },
      };
    }),
  };
}

/** The calls of the last assistant message, when no tool message answers them yet. */
function pendingCalls(items: readonly ModelMessage[]): { toolCallId: string; toolName: string }[] {
  const last = items.at(-1);
  if (last?.role !== "assistant" || typeof last.content === "string") return [];
  return last.content.flatMap((p) =>
    p.type === "tool-call" ? [{ toolCallId: p.toolCallId, toolName: p.toolName }] : [],
  );
}

export class VercelAiRunner implements AgentFrameworkRunner<ToolExecutionResult> {
  /** Plan mode through the kit: the plan note before the turn, write_todos alone in a planning turn. */
  readonly supportsPlanMode = true;
  readonly #options: VercelAiRunnerOptions;
  readonly #declared: ToolSet;

  constructor(options: VercelAiRunnerOptions) {
    this.#options = options;
    this.#declared = Object.fromEntries(
      Object.entries(options.tools ?? {}).map(([name, t]) => [
        name,
        // No execute: streamText returns the call and runs nothing.
        tool({ ...(t.description !== undefined ? { description: t.description } : {}), inputSchema: t.inputSchema }),
      ]),
    );
  }

  /** What this adapter supports, each gap with its reason (docs/adapters.md). */
  describe(): RunnerCapabilities {
    return declareCapabilities({
      supported: [
        "text_deltas",
        "reasoning_deltas",
        "usage",
        "built_in_tools",
        "structured_output",
        "parallel_deferred_calls",
        "plan_mode",
        "tool_cancellation",
        "tracing",
        "unfinished_turn_messages",
      ],
      unsupported: {
        mcp_sources: "McpToolSource is Python-only; the runner offers no tool sources",
        mcp_tasks: "no tool sources, so no MCP tasks",
        handoffs: "the AI SDK has no handoff between agents",
        compaction: "not implemented",
        tool_task_polls: "not implemented: the runner has no pollToolTask",
        tool_task_cancels: "not implemented: the runner has no cancelToolTask",
      },
    });
  }

  /** The turn's built-ins as tools without `execute`: the session runs their calls. */
  #builtIns(turn: AgentTurnContext): ToolSet {
    const specs = turnBuiltIns(turn, Object.keys(this.#declared));
    return Object.fromEntries(
      specs.map((spec) => [
        spec.name,
        tool({ description: spec.description, inputSchema: jsonSchema(spec.parameters as Parameters<typeof jsonSchema>[0]) }),
      ]),
    );
  }

  buildUserMessage(text: string): FrameworkMessage {
    return frameworkMessage({ role: MessageRole.USER, frameworkItem: JSON.stringify({ role: "user", content: text }), text });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const history = withPlanNote(turn, (text) => this.buildUserMessage(text)).map((m) => JSON.parse(m.frameworkItem) as ModelMessage);
    const state = parseRunState(turn.frameworkRunState);
    const items = state.items;
    const pending = pendingCalls(items);
    if (pending.length > 0) {
      const byId = new Map(turn.toolCalls.map((r) => [r.toolCallId, r]));
      for (const call of pending) {
        if (!byId.has(call.toolCallId)) {
          throw new Error(`the turn has no record of tool call ${JSON.stringify(call.toolCallId)}`);
        }
      }
      items.push(toolMessage(pending, byId));
    }
    const result = streamText({
      model: this.#options.model,
      ...(this.#options.instructions !== undefined ? { system: this.#options.instructions } : {}),
      messages: [...history, ...items],
      // A planning turn offers write_todos alone.
      tools: isPlanning(turn) ? this.#builtIns(turn) : { ...this.#declared, ...this.#builtIns(turn) },
      stopWhen: isStepCount(1),
      ...(this.#options.output !== undefined ? { output: this.#options.output.spec } : {}),
      abortSignal: turn.cancellationSignal,
      maxRetries: 0, // the RunModel Step's own retry policy retries
    });
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: part.text }) });
      } else if (part.type === "reasoning-delta") {
        turn.events.write({ type: "reasoning_delta", payload: create(ReasoningDeltaPayloadSchema, { text: part.text }) });
      } else if (part.type === "error") {
        throw part.error instanceof Error ? part.error : new Error(String(part.error));
      } else if (part.type === "abort") {
        throw turn.cancellationSignal.reason instanceof Error ? turn.cancellationSignal.reason : new Error("the model call was aborted");
      }
    }
    const [response, toolCalls, usage, finishReason, text] = await Promise.all([
      result.response,
      result.toolCalls,
      result.usage,
      result.finishReason,
      result.text,
    ]);
    const produced = [...items, ...(response.messages as ModelMessage[])];
    const usageOut = {
      modelCalls: 1,
      inputTokens: usage.inputTokens ?? 0,
      outputTokens: usage.outputTokens ?? 0,
      cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
      reasoningTokens: usage.outputTokenDetails?.reasoningTokens ?? 0,
    };
    const modelCallMetadata = {
      requestModel: typeof this.#options.model === "string" ? this.#options.model : this.#options.model.modelId,
      responseModel: response.modelId,
      responseId: response.id,
      finishReasons: [finishReason],
    };
    if (toolCalls.length > 0) {
      const tools = this.#options.tools ?? {};
      const router = new ToolRouter(turn);
      return toolCallsRequested({
        frameworkRunState: encodeRunState({ items: produced, outputRetries: state.outputRetries }),
        toolCalls: toolCalls.map((call) =>
          router.defer({
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            arguments: JSON.stringify(call.input ?? {}),
            frameworkEffect: tools[call.toolName]?.effect,
            frameworkRequiresApproval: tools[call.toolName]?.requiresApproval,
          }),
        ),
        usage: usageOut,
        modelCallMetadata,
      });
    }
    const output = this.#options.output;
    if (output !== undefined) {
      const { messages: _messages, ...metadata } = response;
      const check = await checkOutput(output, text, { response: metadata, usage, finishReason });
      if (!check.ok) {
        const limit = output.maxRetries ?? DEFAULT_OUTPUT_RETRIES;
        if (state.outputRetries >= limit) {
          return turnCompleted({
            newMessages: produced.map(storedMessage),
            usage: usageOut,
            modelCallMetadata,
            turnError: `the answer failed its output check ${limit + 1} times in a row: ${check.retryPrompt}`,
          });
        }
        // Stored now, so the next Step's model call sees them as history.
        const retry: ModelMessage = { role: "user", content: check.retryPrompt };
        return turnContinued({
          frameworkRunState: encodeRunState({ items: [], outputRetries: state.outputRetries + 1 }),
          newMessages: [...produced, retry].map(storedMessage),
          usage: usageOut,
          modelCallMetadata,
        });
      }
    }
    return turnCompleted({ newMessages: produced.map(storedMessage), usage: usageOut, modelCallMetadata });
  }

  /**
   * A turn that ends without an answer keeps its transcript: the run state's
   * items, with a tool result for every call (`NO_RESULT_TEXT` for a call that
   * never finished).
   */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    const { items } = parseRunState(turn.frameworkRunState);
    const pending = pendingCalls(items);
    if (pending.length > 0) {
      items.push(toolMessage(pending, new Map(turn.toolCalls.map((r) => [r.toolCallId, r]))));
    }
    return items.map(storedMessage);
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    const name = call.toolCall.toolName;
    const declared = this.#options.tools?.[name];
    if (declared === undefined) throw new ToolExecutionError(`unknown tool ${JSON.stringify(name)}`);
    const input = parseToolArguments(call.toolCall.arguments);
    await call.heartbeat();
    // The body reads its Step from `call`, or from the kit's `dexRunInfo()` like every adapter's tools.
    return toolResult(toolOutputText(await withRunInfo(runInfoOfToolStep(call), () => declared.execute(input, call))));
  }
}
