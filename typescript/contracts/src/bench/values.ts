// Benchmark values: realistic sizes of stored messages, tool call records and
// a snapshot of 200 messages. Shared by codec_bench.ts and ad-hoc profiling.

import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";

import {
  AgentInterruptSchema,
  AgentMessageSchema,
  AgentPlanSchema,
  AgentPlanTaskSchema,
  AgentSnapshotSchema,
  AgentStateSchema,
  AgentStatus,
  AgentToolCallSchema,
  AgentUsageSchema,
  InteractionMode,
  InterruptKind,
  MessageRole,
  PlanStatus,
  PlanTaskStatus,
  QuestionAnswerSchema,
  QuestionResolution,
  ToolCallStatus,
  ToolEffect,
} from "../index.js";

const BASE_MS = Date.UTC(2026, 10, 1, 12, 0, 0, 123);

/** Deterministic prose of about `length` characters, with some non-ASCII. */
function prose(length: number, salt: number): string {
  const words = ["agent", "tool", "turn", "plan", "café", "step", "résumé", "dex", "snapshot", "\"quoted\"", "line\n"];
  let out = "";
  for (let i = salt; out.length < length; i++) out += `${words[i % words.length]} `;
  return out.slice(0, length);
}

function jsonText(length: number, salt: number): string {
  return JSON.stringify({ type: "message", id: `item_${salt}`, content: [{ type: "output_text", text: prose(length, salt) }] });
}

export function toolCall(i: number) {
  return create(AgentToolCallSchema, {
    toolCallId: `call_${i.toString(36).padStart(8, "0")}`,
    turnId: "turn-12",
    toolName: "search_documents",
    arguments: JSON.stringify({ query: prose(120, i), limit: 20, filters: { kind: "pdf", tags: ["a", "b"] } }),
    effect: ToolEffect.READ,
    requiresApproval: i % 3 === 0,
    status: ToolCallStatus.SUCCEEDED,
    output: prose(1500, i),
    deferralOrder: i,
    traceContext: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    waitUntil: timestampFromMs(BASE_MS + i * 1000),
    inputAnswers: [
      create(QuestionAnswerSchema, {
        interruptId: `call_${i}-input-1`,
        question: "Which folder?",
        answer: "reports/2026",
        resolution: QuestionResolution.ANSWERED,
      }),
    ],
    inputChoices: ["reports/2025", "reports/2026"],
    inputAllowsFreeText: true,
  });
}

export function message(i: number) {
  const role = [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL][i % 3] as MessageRole;
  return create(AgentMessageSchema, {
    sequence: BigInt(1000 + i),
    turnId: `turn-${Math.floor(i / 6)}`,
    role,
    text: role === MessageRole.TOOL ? undefined : prose(600, i),
    toolCallId: role === MessageRole.TOOL ? `call_${i}` : undefined,
    toolName: role === MessageRole.TOOL ? "search_documents" : undefined,
    toolOutput: role === MessageRole.TOOL ? prose(800, i) : undefined,
    frameworkItem: jsonText(900, i),
    createdAt: timestampFromMs(BASE_MS + i * 1500),
  });
}

export function snapshot() {
  return create(AgentSnapshotSchema, {
    state: create(AgentStateSchema, {
      status: AgentStatus.RUNNING_TOOLS,
      turnCount: 33,
      activeTurnId: "turn-34",
      nextMessageSequence: 1200n,
      interactionMode: InteractionMode.EXECUTING,
      acceptsTurnControl: true,
    }),
    messages: Array.from({ length: 200 }, (_, i) => message(i)),
    pendingInterrupts: [
      create(AgentInterruptSchema, {
        interruptId: "call_7",
        kind: InterruptKind.TOOL_APPROVAL,
        toolCallId: "call_7",
        toolName: "send_email",
        arguments: JSON.stringify({ to: "a@example.com", body: prose(300, 7) }),
        createdAt: timestampFromMs(BASE_MS),
        allowsFreeText: true,
      }),
    ],
    toolCalls: Array.from({ length: 5 }, (_, i) => toolCall(i)),
    usage: create(AgentUsageSchema, { modelCalls: 120n, inputTokens: 1_500_000n, outputTokens: 80_000n }),
    queuedMessageCount: 1,
    plan: create(AgentPlanSchema, {
      revision: 3,
      status: PlanStatus.ACTIVE,
      tasks: Array.from({ length: 6 }, (_, i) =>
        create(AgentPlanTaskSchema, { content: prose(80, i), status: PlanTaskStatus.PENDING }),
      ),
      updatedAt: timestampFromMs(BASE_MS),
    }),
    sessionSettings: { model: "gpt-5", temperature: 0.2, tools: ["search", "email"], limits: { turns: 50 } },
  });
}
