/**
 * A scripted runner with every optional capability (tool tasks, compaction,
 * unfinished-turn messages), for the sidecar tests of tool tasks and
 * compaction (python/core/tests/test_remote_runner_tasks.py). It is a runner
 * of its own, not the ScriptedRunner's, because DescribeRunner reports what a
 * runner defines and the plain runner's tests rely on it polling nothing.
 *
 * "job <mode>" asks for the `job` tool (a read; "job crash-write" asks for
 * the single-attempt write `job_write`), whose execution starts task
 * `job-<toolCallId>`. Its polls, by mode:
 * - a number N: running N times, then the result "job done after N polls";
 * - `forever`: running, next poll in an hour; `hold-cancel` too, and its
 *   cancel waits on the `cancel` gate;
 * - `hold-poll`: each poll waits on the `poll` gate, then the result;
 * - `fail`: a ToolExecutionError "the job failed";
 * - `crash`, `crash-write`: each poll throws a RangeError;
 * - `huge`: the task and its polls answer an interval of 1e12 s (beyond the
 *   wire's int32 milliseconds); `nan`: the task answers a NaN interval;
 * - `hold-start`: the execution saves the task ID as its heartbeat checkpoint,
 *   writes `scripted.task_checkpointed` and waits on the `start` gate; an
 *   attempt that finds the checkpoint returns that task again. Then the result.
 * The poll count travels in the task's continuation, so it survives a
 * SIGKILLed sidecar. After the tool the turn answers "Results: <tool>=<result>".
 *
 * Any other prompt answers "I have seen N messages.". Compaction counts 100
 * tokens a message (the turn's messages are the ones after the summary),
 * cuts after the earliest assistant message whose newer messages fit the
 * budget, and summarizes as "sidecar summary G of [summary G-1 and ]messages
 * A..B"; with the session setting `holdSummary` the summary waits on the
 * `summary` gate. Every call is logged to the run log.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { MessageRole, TextDeltaPayloadSchema, ToolEffect, type AgentToolCall } from "@dex-agents/contracts";
import { modelVisibleResult } from "../results.js";
import {
  ToolExecutionError,
  type AgentFrameworkRunner,
  type AgentTurnContext,
  type AgentTurnOutcome,
  type ContextSummaryRequest,
  type ContextSummaryResult,
  type DeferredToolExecution,
  type DeferredToolOutcome,
  type FrameworkMessage,
  type ToolTaskCancellation,
  type ToolTaskPoll,
  type ToolTaskPollOutcome,
} from "../runner.js";
import { RunLog } from "./runlog.js";
import { message, type Item } from "./scripted_runner.js";
import { contextSummary, deferredToolCall, toolCallsRequested, toolResult, toolTaskPending, toolTaskStarted, turnCompleted } from "../values.js";

/** Tokens the estimate counts for each message. */
export const TOKENS_PER_MESSAGE = 100;
const POLL_SECONDS = 0.05; // the session rounds it up to its 1 s minimum
const FOREVER_SECONDS = 3600;
const HUGE_SECONDS = 1e12;

interface JobArguments {
  readonly mode: string;
}

function jobMode(call: AgentToolCall): string {
  return (JSON.parse(call.arguments) as JobArguments).mode;
}

/** Polls so far, from the continuation the previous poll left ("polls:K"). */
function pollsSoFar(call: AgentToolCall): number {
  const continuation = call.inputContinuation ?? "";
  return continuation.startsWith("polls:") ? Number(continuation.slice("polls:".length)) : 0;
}

export class ScriptedTaskRunner implements AgentFrameworkRunner<DeferredToolOutcome> {
  readonly log: RunLog;

  constructor(logPath: string) {
    this.log = new RunLog(logPath);
  }

  buildUserMessage(text: string): FrameworkMessage {
    return message({ role: "user", text });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const prompt = [...turn.messages].reverse().find((m) => m.role === MessageRole.USER)?.text ?? "";
    this.log.append("model", {
      turn: turn.turnId,
      attempt: turn.attempt,
      prompt,
      messages: turn.messages.map((m) => Number(m.sequence)),
      summary: turn.contextSummary?.text ?? null,
      tool_results: Object.fromEntries(turn.toolCalls.map((c) => [c.toolCallId, modelVisibleResult(c)])),
    });
    const usage = { modelCalls: 1, inputTokens: TOKENS_PER_MESSAGE * turn.messages.length, outputTokens: 2 };
    if (turn.frameworkRunState !== undefined) {
      const answer = `Results: ${turn.toolCalls.map((c) => `${c.toolName}=${modelVisibleResult(c)}`).join("; ")}`;
      turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: answer }) });
      const items = [...this.unfinished(turn), message({ role: "assistant", text: answer })];
      return turnCompleted({ newMessages: items, usage });
    }
    if (prompt.startsWith("job ")) {
      const mode = prompt.slice("job ".length);
      const tool = mode === "crash-write" ? "job_write" : "job";
      const id = `j${turn.turnId.split("-").pop() ?? ""}`;
      const effect = tool === "job" ? ToolEffect.READ : ToolEffect.NON_IDEMPOTENT_WRITE;
      const call: Item = { role: "assistant", text: "", toolCallId: id, toolName: tool };
      return toolCallsRequested({
        frameworkRunState: JSON.stringify([call]),
        toolCalls: [
          deferredToolCall({ toolCallId: id, toolName: tool, arguments: JSON.stringify({ mode }) }, turn.resolveToolPolicy(tool, effect, false)),
        ],
        usage,
      });
    }
    const answer = `I have seen ${turn.messages.length} messages.`;
    turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: answer }) });
    return turnCompleted({ newMessages: [message({ role: "assistant", text: answer })], usage });
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome> {
    const taskId = `job-${call.toolCall.toolCallId}`;
    this.log.append("tool", {
      name: call.toolCall.toolName,
      key: call.idempotencyKey,
      attempt: call.attempt,
      supports_tool_tasks: call.supportsToolTasks,
    });
    if (!call.supportsToolTasks) throw new ToolExecutionError("the job needs a session that polls tasks");
    const mode = jobMode(call.toolCall);
    if (mode === "hold-start" && call.heartbeatCheckpoint !== undefined) {
      this.log.append("task_resume", { task_id: call.heartbeatCheckpoint, attempt: call.attempt });
      return toolTaskStarted(call.heartbeatCheckpoint, POLL_SECONDS);
    }
    this.log.append("task_start", { task_id: taskId, key: call.idempotencyKey });
    if (mode === "hold-start") {
      // Ordered frames: the event follows the checkpoint, so Dex holds it once the event is seen.
      await call.saveHeartbeatCheckpoint(taskId);
      call.events.writeRaw("scripted.task_checkpointed", JSON.stringify({ task_id: taskId }));
      await this.log.waitForGate("start", call.cancellationSignal);
    }
    const interval = mode === "huge" ? HUGE_SECONDS : mode === "nan" ? Number.NaN : POLL_SECONDS;
    return toolTaskStarted(taskId, interval);
  }

  async pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome> {
    const mode = jobMode(poll.toolCall);
    const index = pollsSoFar(poll.toolCall);
    const taskId = poll.toolCall.taskId ?? "";
    this.log.append("poll", { task_id: taskId, key: poll.idempotencyKey, attempt: poll.attempt, index });
    await poll.heartbeat();
    if (mode === "fail") throw new ToolExecutionError("the job failed");
    if (mode.startsWith("crash")) throw new RangeError(`the job's poll crashed on attempt ${poll.attempt}`);
    if (mode === "forever" || mode === "hold-cancel" || mode === "huge") {
      const seconds = mode === "huge" ? HUGE_SECONDS : FOREVER_SECONDS;
      return toolTaskPending(seconds, `polls:${index + 1}`);
    }
    if (mode === "hold-poll") {
      await this.log.waitForGate("poll", poll.cancellationSignal);
    } else if (mode !== "hold-start" && index < Number(mode)) {
      return toolTaskPending(POLL_SECONDS, `polls:${index + 1}`);
    }
    this.log.append("job_done", { task_id: taskId, polls: index + 1 });
    return toolResult(`job done; ${index} polls said running`);
  }

  async cancelToolTask(cancellation: ToolTaskCancellation): Promise<void> {
    this.log.append("cancel_task", {
      task_id: cancellation.toolCall.taskId ?? null,
      key: cancellation.idempotencyKey,
      attempt: cancellation.attempt,
    });
    if (jobMode(cancellation.toolCall) === "hold-cancel") {
      await this.log.waitForGate("cancel", cancellation.cancellationSignal);
    }
    this.log.append("cancel_done", { task_id: cancellation.toolCall.taskId ?? null, attempt: cancellation.attempt });
  }

  /** The turn's call items and a result for each final tool call record. */
  buildUnfinishedTurnMessages(turn: AgentTurnContext): readonly FrameworkMessage[] {
    this.log.append("unfinished", {
      turn: turn.turnId,
      records: Object.fromEntries(
        turn.toolCalls.map((c) => [
          c.toolCallId,
          { status: c.status, error: c.error ?? null, cancellation_reason: c.cancellationReason ?? null },
        ]),
      ),
    });
    return this.unfinished(turn);
  }

  private unfinished(turn: AgentTurnContext): FrameworkMessage[] {
    const state = JSON.parse(turn.frameworkRunState ?? "[]") as Item[];
    const results = turn.toolCalls.map((c) =>
      message({ role: "tool", text: modelVisibleResult(c), toolCallId: c.toolCallId, toolName: c.toolName }),
    );
    return [...state.map(message), ...results];
  }

  estimateInputTokens(turn: AgentTurnContext): number {
    const tokens = TOKENS_PER_MESSAGE * turn.messages.length;
    this.log.append("estimate", { turn: turn.turnId, attempt: turn.attempt, tokens });
    return tokens;
  }

  selectCompactionCutoff(turn: AgentTurnContext, retainedTokenBudget: number): number | undefined {
    const messages = turn.messages;
    let cutoff: number | undefined;
    for (let i = 0; i < messages.length - 1; i++) {
      const assistant = messages[i]?.role === MessageRole.ASSISTANT;
      if (assistant && TOKENS_PER_MESSAGE * (messages.length - 1 - i) <= retainedTokenBudget) {
        cutoff = Number(messages[i]?.sequence);
        break;
      }
    }
    this.log.append("cutoff", { turn: turn.turnId, budget: retainedTokenBudget, cutoff: cutoff ?? null });
    return cutoff;
  }

  async summarizeContext(request: ContextSummaryRequest): Promise<ContextSummaryResult> {
    const sequences = request.messages.map((m) => Number(m.sequence));
    const previous = request.previousSummary;
    this.log.append("summary", {
      turn: request.turnId,
      attempt: request.attempt,
      through: request.throughSequence,
      previous: previous?.text ?? null,
      messages: sequences,
    });
    if (request.sessionSettings["holdSummary"] === true) {
      await this.log.waitForGate("summary", request.cancellationSignal);
    }
    const generation = (previous?.generation ?? 0) + 1;
    const folded = previous === undefined ? "" : `summary ${previous.generation} and `;
    return contextSummary({
      text: `sidecar summary ${generation} of ${folded}messages ${sequences[0] ?? "-"}..${request.throughSequence}`,
      usage: { modelCalls: 1, inputTokens: TOKENS_PER_MESSAGE * sequences.length, outputTokens: 5 },
    });
  }
}
