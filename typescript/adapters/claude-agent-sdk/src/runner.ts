/**
 * `ClaudeAgentRunner`: a Claude Agent SDK agent as the session's whole-turn harness.
 *
 * The bundled Claude Code CLI runs a turn's model calls and tools itself, so
 * one RunModel Step runs the CLI until it answers or stops at a tool it must
 * not run. A PreToolUse hook decides every call: an unapproved read runs
 * inline (at least once: a retried RunModel repeats it), any other call of a
 * tool the runner owns is deferred (`defer`: the run ends with
 * `tool_deferred`) and becomes a tool Step, and a tool the runner cannot run
 * (a CLI built-in, a server in `options.mcpServers`) runs inline only as an
 * unapproved read, else the hook denies it.
 *
 * A run may defer several calls of one response; they become tool Steps one
 * at a time, in the response's order, and the CLI resumes once every one has
 * its result (`feedback.ts`). The runner writes each record's model-visible
 * result into the transcript itself (a tool_result entry shaped like the
 * CLI's) and resumes with "Continue from where you left off.", the prompt the
 * CLI's own resume adds; that resume, which the Python adapter uses, ends
 * with `tool_deferred_unavailable` here.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  query,
  type HookCallback,
  type Options,
  type SDKAssistantMessage,
  type SDKResultMessage,
  type SDKUserMessage,
  type SdkMcpToolDefinition,
} from "@anthropic-ai/claude-agent-sdk";
import { create } from "@bufbuild/protobuf";
import { TextDeltaPayloadSchema, ToolEffect, MessageRole } from "@dex-agents/contracts";
import {
  isFinal,
  modelVisibleResult,
  ToolRouter,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type DeferredToolCall,
  type DeferredToolExecution,
  type FrameworkMessage,
  type ToolExecutionResult,
  type ToolPolicy,
  type UsageCounts,
  declareCapabilities,
  type RunnerCapabilities,
  turnCompleted,
  toolCallsRequested,
  frameworkMessage,
  deferredToolCall,
} from "@dex-agents/core";
import { feedBack, inResponseOrder } from "./feedback.js";
import { RunSessionStore } from "./store.js";
import { ToolTable } from "./tools.js";
import {
  answeredCalls,
  blocks,
  decodeRunState,
  encodeItem,
  encodeRunState,
  projectTurn,
  sessionTranscript,
  type TranscriptEntry,
} from "./transcript.js";

/** The CLI's turn bound when `options.maxTurns` is unset, so a run always ends. */
export const DEFAULT_MAX_TURNS = 20;
/** The prompt that resumes a turn once its deferred calls' results are in the transcript. */
export const CONTINUE_PROMPT = "Continue from where you left off.";

export function maxTurnsError(maxTurns: number): string {
  return `the Claude Code run stopped at max_turns=${maxTurns} before Claude answered`;
}

export function deniedText(toolName: string): string {
  return (
    `The tool ${toolName} was not run: it runs inside the Claude Code harness, where ` +
    "only unapproved read tools may run in this durable session."
  );
}

/** The CLI session ID of a Dex session: a UUID (the CLI takes only UUIDs) derived from the Flow ID. */
export function sessionUuid(flowId: string): string {
  const hex = createHash("sha256").update(`dex-agents/claude-agent-sdk/${flowId}`).digest("hex");
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const RUNNER_OWNED = ["resume", "sessionId", "sessionStore", "continue", "forkSession", "abortController", "resumeSessionAt"] as const;

export interface ClaudeAgentRunnerOptions {
  /**
   * The agent: model, system prompt, CLI `tools`, permission rules, `env` for
   * the CLI, `maxTurns`. The session fields and PreToolUse hooks are the runner's.
   */
  readonly options?: Options;
  /** SDK MCP tools (`tool()`) by server name: the tools that can be deferred. */
  readonly tools?: Readonly<Record<string, readonly SdkMcpToolDefinition<any>[]>>;
  /** By the CLI's name (`mcp__app__book_trip`) or the tool's own; wins over the session's. */
  readonly toolPolicies?: Readonly<Record<string, ToolPolicy>>;
  /** Effect of a tool with no policy and no annotation; absent: the session's. */
  readonly defaultToolEffect?: ToolEffect;
}

/** One CLI run's hook decisions. */
class Run {
  readonly deferred = new Map<string, DeferredToolCall>();
  readonly router: ToolRouter;
  problem: string | undefined;

  constructor(
    readonly runner: ClaudeAgentRunner,
    readonly turn: AgentTurnContext,
  ) {
    this.router = runner.router(turn);
  }

  readonly preToolUse: HookCallback = async (input, toolUseId) => {
    if (input.hook_event_name !== "PreToolUse") return {};
    const name = input.tool_name;
    const callId = toolUseId ?? input.tool_use_id;
    const tool = this.runner.tools.get(name);
    const bareName = tool?.bareName ?? name;
    const policyName = this.router.hasPolicy(name) || !this.router.hasPolicy(bareName) ? name : bareName;
    const policy = this.router.policy(name, { frameworkEffect: tool?.frameworkEffect, policyName });
    const inline = policy.effect === ToolEffect.READ && !policy.requiresApproval;
    if (inline) return decision("allow");
    if (tool === undefined) return decision("deny", deniedText(name));
    const problem = this.router.claimId(name, callId);
    if (problem !== undefined) {
      this.problem = problem;
      return decision("deny", problem);
    }
    this.deferred.set(callId, deferredToolCall({ toolCallId: callId, toolName: name, arguments: JSON.stringify(input.tool_input ?? {}) }, policy));
    return decision("defer");
  };
}

function decision(permissionDecision: "allow" | "deny" | "defer", reason?: string) {
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse" as const,
      permissionDecision,
      ...(reason !== undefined ? { permissionDecisionReason: reason } : {}),
    },
  };
}

export class ClaudeAgentRunner implements AgentFrameworkRunner<ToolExecutionResult> {
  readonly tools: ToolTable;
  readonly #options: Options;
  readonly #policies: ReadonlyMap<string, ToolPolicy>;
  readonly #defaultEffect: ToolEffect | undefined;

  constructor(options: ClaudeAgentRunnerOptions = {}) {
    const base = options.options ?? {};
    for (const field of RUNNER_OWNED) {
      if (base[field] !== undefined && base[field] !== false) throw new Error(`options.${field} is the runner's; leave it unset`);
    }
    if (base.hooks?.PreToolUse !== undefined) throw new Error("options.hooks has PreToolUse hooks; the runner owns PreToolUse");
    this.tools = new ToolTable(options.tools ?? {});
    for (const server of this.tools.serverNames()) {
      if (base.mcpServers?.[server] !== undefined) throw new Error(`tools server ${JSON.stringify(server)} is also in options.mcpServers; name it apart`);
    }
    this.#options = base;
    this.#policies = new Map(Object.entries(options.toolPolicies ?? {}));
    this.#defaultEffect = options.defaultToolEffect;
  }

  /** What this adapter supports, each gap with its reason (docs/adapters.md). */
  describe(): RunnerCapabilities {
    return declareCapabilities({
      supported: ["text_deltas", "usage", "parallel_deferred_calls", "tracing", "unfinished_turn_messages"],
      unsupported: {
        reasoning_deltas: "the runner writes no reasoning_delta events for Claude's thinking blocks",
        built_in_tools: "the CLI declares its own tools; the session's built-in definitions do not reach it",
        mcp_sources: "McpToolSource is Python-only; the runner offers no tool sources",
        mcp_tasks: "no tool sources, so no MCP tasks",
        structured_output: "the runner does not read the CLI's structured output; the answer is text",
        handoffs: "Claude's sub-agents run inside the CLI as a tool, not as a handoff of the turn",
        plan_mode: "not implemented",
        compaction: "not implemented: the runner offers no token estimate, cutoff or summary call",
        tool_cancellation: "a tool's handler is called without an AbortSignal, so a cancelled tool Step does not reach it",
        tool_task_polls: "the runner starts no tool tasks, so it has no pollToolTask",
        tool_task_cancels: "the runner starts no tool tasks, so it has no cancelToolTask",
      },
    });
  }

  /** The turn's router: the runner's policies win over the session's; either may name a tool by its CLI name or its own. */
  router(turn: AgentTurnContext): ToolRouter {
    return new ToolRouter(turn, { toolPolicies: this.#policies, defaultToolEffect: this.#defaultEffect });
  }

  buildUserMessage(text: string): FrameworkMessage {
    return frameworkMessage({ role: MessageRole.USER, frameworkItem: encodeItem([], text), text });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const history = sessionTranscript(turn.messages);
    const sessionId = sessionUuid(turn.flowId);
    let turnEntries: TranscriptEntry[] = [];
    let prompt: string[];
    if (turn.frameworkRunState !== undefined) {
      const state = decodeRunState(turn.frameworkRunState);
      const fed = feedBack(state, turn.toolCalls, history.entries, sessionId);
      if (fed.next !== undefined) {
        // The response's next deferred call: its Step comes before Claude sees any result.
        const frameworkRunState = encodeRunState({ entries: fed.entries, deferred: state.deferred });
        return toolCallsRequested({ frameworkRunState, toolCalls: [fed.next], usage: { modelCalls: 0 } });
      }
      turnEntries = fed.entries;
      prompt = [CONTINUE_PROMPT];
    } else {
      if (history.pendingUserTexts.length === 0) throw new Error("the turn has no user message to send to Claude");
      prompt = history.pendingUserTexts;
    }
    const run = new Run(this, turn);
    const store = new RunSessionStore(sessionId, [...history.entries, ...turnEntries]);
    const resume = history.entries.length > 0 || turnEntries.length > 0;
    const { result, assistants } = await this.#runCli(run, store, sessionId, prompt, resume);
    turnEntries = [...turnEntries, ...store.appended];
    const usage = usageOf(result, assistants);
    const modelCallMetadata = metadataOf(this.#options, assistants);
    if (run.problem !== undefined) {
      return turnCompleted({ newMessages: projectTurn(turnEntries), usage, modelCallMetadata, turnError: run.problem });
    }
    if (result.subtype === "success" && result.stop_reason === "tool_deferred") {
      const reported = result.deferred_tool_use;
      if (reported === undefined || !run.deferred.has(reported.id)) {
        throw new Error(`the CLI deferred a tool call the runner's hook did not defer: ${JSON.stringify(reported)}`);
      }
      const deferred = inResponseOrder(run.deferred.values(), turnEntries);
      return toolCallsRequested({
        frameworkRunState: encodeRunState({ entries: turnEntries, deferred }),
        toolCalls: [deferred[0]!],
        usage,
        modelCallMetadata,
      });
    }
    if (result.subtype === "error_max_turns") {
      const turnError = maxTurnsError(this.#options.maxTurns ?? DEFAULT_MAX_TURNS);
      return turnCompleted({ newMessages: projectTurn(turnEntries), usage, modelCallMetadata, turnError });
    }
    if (result.subtype !== "success" || result.is_error) {
      const detail = result.subtype === "success" ? result.result : result.errors.join("; ");
      throw new Error(`the Claude Code run failed (${result.subtype}${"stop_reason" in result ? `, ${result.stop_reason}` : ""}): ${detail}`);
    }
    return turnCompleted({ newMessages: projectTurn(turnEntries), usage, modelCallMetadata });
  }

  async #runCli(
    run: Run,
    store: RunSessionStore,
    sessionId: string,
    prompt: readonly string[],
    resume: boolean,
  ): Promise<{ result: SDKResultMessage; assistants: SDKAssistantMessage[] }> {
    const base = this.#options;
    const turn = run.turn;
    const config = mkdtempSync(join(tmpdir(), "dex-claude-"));
    const abortController = new AbortController();
    const onCancel = (): void => abortController.abort(turn.cancellationSignal.reason);
    if (turn.cancellationSignal.aborted) onCancel();
    turn.cancellationSignal.addEventListener("abort", onCancel);
    let finished!: () => void;
    const ended = new Promise<void>((resolve) => (finished = resolve));
    async function* messages(): AsyncGenerator<SDKUserMessage> {
      yield {
        type: "user",
        message: { role: "user", content: prompt.map((text) => ({ type: "text" as const, text })) },
        parent_tool_use_id: null,
      };
      await ended; // the in-process servers answer over this stream until the result
    }
    let result: SDKResultMessage | undefined;
    const assistants: SDKAssistantMessage[] = [];
    try {
      const running = query({
        prompt: messages(),
        options: {
          ...base,
          mcpServers: { ...base.mcpServers, ...this.tools.servers() },
          hooks: { ...base.hooks, PreToolUse: [{ hooks: [run.preToolUse] }] },
          sessionStore: store,
          ...(resume ? { resume: sessionId } : { sessionId }),
          maxTurns: base.maxTurns ?? DEFAULT_MAX_TURNS,
          env: { ...process.env, ...base.env, CLAUDE_CONFIG_DIR: config },
          cwd: base.cwd ?? config,
          abortController,
        },
      });
      for await (const message of running) {
        await turn.heartbeat();
        if (message.type === "assistant" && message.parent_tool_use_id === null) {
          assistants.push(message);
          for (const block of message.message.content) {
            if (block.type === "text" && block.text !== "") {
              turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: block.text }) });
            }
          }
        } else if (message.type === "system" && message.subtype === "mirror_error") {
          throw new Error(`the session transcript was not stored: ${JSON.stringify(message)}`);
        } else if (message.type === "result") {
          result = message;
          finished();
        }
      }
    } catch (error) {
      // The CLI exits non-zero after an error result (max turns, an API error);
      // the result, when it came, says what happened. A cancellation wins.
      if (turn.cancellationSignal.aborted) throw turn.cancellationSignal.reason instanceof Error ? turn.cancellationSignal.reason : new Error("the turn was cancelled");
      if (result === undefined) throw error;
    } finally {
      finished();
      turn.cancellationSignal.removeEventListener("abort", onCancel);
      rmSync(config, { recursive: true, force: true });
    }
    if (turn.cancellationSignal.aborted) throw turn.cancellationSignal.reason instanceof Error ? turn.cancellationSignal.reason : new Error("the turn was cancelled");
    if (result === undefined) throw new Error("the Claude Code CLI ended without a result");
    return { result, assistants };
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    return this.tools.execute(call);
  }

  /**
   * A steered, cancelled or failed turn's transcript up to its last answered
   * tool call, then a call/result pair for each final record the transcript
   * lacks (display only: the next turn's prompt and the session's note tell
   * the model what ran).
   */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): FrameworkMessage[] {
    const entries = turn.frameworkRunState === undefined ? [] : decodeRunState(turn.frameworkRunState).entries;
    const kept = withoutUnansweredTail(entries);
    const projected = kept.length > 0 ? projectTurn(kept) : [];
    // Only the empty stand-in that carries the transcript: nothing to show.
    const messages = projected.some((m) => (m.text ?? "") !== "" || m.toolCallId !== undefined) ? projected : [];
    const shown = new Set(messages.filter((m) => m.role === MessageRole.TOOL).map((m) => m.toolCallId));
    const empty = encodeItem([]);
    for (const record of [...turn.toolCalls].sort((a, b) => a.deferralOrder - b.deferralOrder)) {
      if (shown.has(record.toolCallId) || !isFinal(record.status)) continue;
      messages.push(frameworkMessage({ role: MessageRole.ASSISTANT, frameworkItem: empty, toolCallId: record.toolCallId, toolName: record.toolName, toolArguments: record.arguments }));
      messages.push(frameworkMessage({ role: MessageRole.TOOL, frameworkItem: empty, toolCallId: record.toolCallId, toolName: record.toolName, toolOutput: modelVisibleResult(record) }));
    }
    return messages;
  }
}

/**
 * The entries before the first response with a tool use that got no result.
 * The CLI writes each content block of a response as an entry of its own, so
 * the cut is at the response's first entry: its answered calls then show from
 * their records, once.
 */
function withoutUnansweredTail(entries: readonly TranscriptEntry[]): TranscriptEntry[] {
  const answered = answeredCalls(entries);
  const isAssistant = ([subpath, e]: TranscriptEntry): boolean => subpath === "" && e["type"] === "assistant";
  const unanswered = entries.find((pair) => isAssistant(pair) && blocks(pair[1]).some((b) => b["type"] === "tool_use" && !answered.has(String(b["id"]))));
  if (unanswered === undefined) return [...entries];
  const response = responseId(unanswered[1]);
  const index = entries.findIndex((pair) => pair === unanswered || (response !== undefined && isAssistant(pair) && responseId(pair[1]) === response));
  return entries.slice(0, index);
}

function responseId(entry: Record<string, unknown>): string | undefined {
  const message = entry["message"];
  const id = typeof message === "object" && message !== null ? (message as Record<string, unknown>)["id"] : undefined;
  return typeof id === "string" ? id : undefined;
}

function usageOf(result: SDKResultMessage, assistants: readonly SDKAssistantMessage[]): UsageCounts {
  return {
    modelCalls: new Set(assistants.map((m) => m.message.id)).size,
    inputTokens: result.usage.input_tokens ?? 0,
    outputTokens: result.usage.output_tokens ?? 0,
    cachedInputTokens: result.usage.cache_read_input_tokens ?? 0,
  };
}

function metadataOf(options: Options, assistants: readonly SDKAssistantMessage[]) {
  const last = assistants.at(-1)?.message;
  return {
    requestModel: options.model,
    responseModel: last?.model,
    providerName: "anthropic",
    responseId: last?.id,
    finishReasons: last?.stop_reason ? [last.stop_reason] : [],
  };
}
