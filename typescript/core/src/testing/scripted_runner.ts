/**
 * A runner scripted by the user prompt, for the sidecar tests of the Python
 * side (python/core/tests/test_remote_runner.py): no framework, so those tests
 * exercise the runner service and the Step semantics alone.
 *
 * "weather in <city>" asks for get_weather (a read) and then answers
 * "Results: get_weather=<output>"; the tool-turn bench's "What is the value of
 * x?" asks for lookup (a read) and answers "x is 42."; "slow" holds its model call on the `model`
 * gate; "charge" asks for the single-attempt charge, held on the `charge`
 * gate; "boom" throws from the model call; anything else answers
 * "I have seen N messages.". Every model call and tool run is logged.
 *
 * @module
 */

import { create } from "@bufbuild/protobuf";
import { MessageRole, TextDeltaPayloadSchema, ToolEffect } from "@dex-agents/contracts";
import type {
  AgentFrameworkRunner,
  AgentTurnContext,
  AgentTurnOutcome,
  DeferredToolExecution,
  FrameworkMessage,
  ToolExecutionResult,
} from "../runner.js";
import { TurnFailed } from "../errors.js";
import { modelVisibleResult } from "../results.js";
import { RunLog } from "./runlog.js";
import { deferredToolCall, frameworkMessage, toolCallsRequested, toolResult, turnCompleted } from "../values.js";

/** One scripted framework item, stored as the message's frameworkItem JSON. */
export interface Item {
  readonly role: "user" | "assistant" | "tool";
  readonly text: string;
  readonly toolCallId?: string;
  readonly toolName?: string;
}

const ROLES = { user: MessageRole.USER, assistant: MessageRole.ASSISTANT, tool: MessageRole.TOOL } as const;

export function message(item: Item): FrameworkMessage {
  return frameworkMessage({
    role: ROLES[item.role],
    frameworkItem: JSON.stringify(item),
    text: item.role === "tool" ? undefined : item.text,
    toolCallId: item.toolCallId,
    toolName: item.toolName,
    toolOutput: item.role === "tool" ? item.text : undefined,
  });
}

export class ScriptedRunner implements AgentFrameworkRunner<ToolExecutionResult> {
  readonly log: RunLog;

  constructor(logPath: string) {
    this.log = new RunLog(logPath);
  }

  buildUserMessage(text: string): FrameworkMessage {
    return message({ role: "user", text });
  }

  async runModelStep(turn: AgentTurnContext): Promise<AgentTurnOutcome> {
    const prompt = [...turn.messages].reverse().find((m) => m.role === 1)?.text ?? "";
    if (prompt !== "What is the value of x?") {
      this.log.append("model", { name: "model", turn: turn.turnId, attempt: turn.attempt, prompt });
    }
    const results = turn.toolCalls.map((c) => `${c.toolName}=${modelVisibleResult(c)}`);
    const usage = { modelCalls: 1, inputTokens: 10, outputTokens: 2 };
    if (turn.frameworkRunState !== undefined) {
      const state = JSON.parse(turn.frameworkRunState) as Item[];
      const toolItems = turn.toolCalls.map((c) =>
        message({ role: "tool", text: modelVisibleResult(c), toolCallId: c.toolCallId, toolName: c.toolName }),
      );
      const answer = turn.toolCalls.some((c) => c.toolName === "lookup") ? "x is 42." : `Results: ${results.join("; ")}`;
      turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: answer }) });
      return turnCompleted({
        newMessages: [...state.map(message), ...toolItems, message({ role: "assistant", text: answer })],
        usage,
      });
    }
    if (prompt.startsWith("weather in ") || prompt === "charge" || prompt === "What is the value of x?") {
      const tool = prompt === "charge" ? "charge" : prompt.startsWith("weather") ? "get_weather" : "lookup";
      const id = `${{ charge: "p", get_weather: "w", lookup: "l" }[tool]}${turn.turnId.split("-").pop()}`;
      const args =
        tool === "charge" ? { amount: 5 } : tool === "lookup" ? { key: "x" } : { city: prompt.slice("weather in ".length) };
      const call: Item = { role: "assistant", text: "", toolCallId: id, toolName: tool };
      return toolCallsRequested({
        frameworkRunState: JSON.stringify([call]),
        toolCalls: [
          deferredToolCall({ toolCallId: id, toolName: tool, arguments: JSON.stringify(args) }, turn.resolveToolPolicy(tool, tool === "charge" ? ToolEffect.NON_IDEMPOTENT_WRITE : ToolEffect.READ)),
        ],
        usage,
      });
    }
    if (prompt === "slow") {
      try {
        await this.log.waitForGate("model", turn.cancellationSignal);
      } catch (error) {
        this.log.append("model_aborted", { name: "model", turn: turn.turnId, attempt: turn.attempt });
        throw error;
      }
    }
    if (prompt === "boom") {
      throw new RangeError("the scripted model failed");
    }
    if (prompt === "refuse") {
      throw new TurnFailed("the scripted framework refused the turn");
    }
    const answer = `I have seen ${turn.messages.length} messages.`;
    turn.events.write({ type: "text_delta", payload: create(TextDeltaPayloadSchema, { text: answer }) });
    return turnCompleted({ newMessages: [message({ role: "assistant", text: answer })], usage });
  }

  async executeDeferredToolCall(call: DeferredToolExecution): Promise<ToolExecutionResult> {
    const args = JSON.parse(call.toolCall.arguments) as Record<string, unknown>;
    if (call.toolCall.toolName !== "lookup") {
      this.log.append("tool", { name: call.toolCall.toolName, key: call.idempotencyKey, attempt: call.attempt });
    }
    await call.heartbeat();
    if (call.toolCall.toolName === "lookup") {
      return toolResult("42");
    }
    if (call.toolCall.toolName === "charge") {
      await this.log.waitForGate("charge", call.cancellationSignal);
      return toolResult(`charged ${String(args["amount"])}`);
    }
    return toolResult(`sunny in ${String(args["city"])}`);
  }
}
