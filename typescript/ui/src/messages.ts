/**
 * `convertAgentSnapshotToUIMessages`: the AI SDK UIMessages a snapshot's stored
 * messages make, the same ones the UI message stream of each turn builds, so a
 * page can load history from the snapshot and stream only the active turn.
 *
 * One turn is one assistant message `msg_<turn_id>`; each model call is one
 * step (`step-start`); tool calls are `dynamic-tool` parts whose results come
 * from the tool messages. A user message between two model calls of one turn
 * is a `steering-message` part and starts the next step. A turn that steering
 * started (`steeredTurns`, which the snapshot route lists) goes on in the
 * message of the turn it steered, as the UI message stream sends it: its
 * opening user messages are `steering-message` parts, then its steps.
 *
 * @module
 */

import {
  type AgentInterrupt,
  type AgentMessage,
  type AgentSnapshot,
  type AgentToolCall,
  InterruptKind,
  MessageRole,
  ToolCallStatus,
} from "@dex-agents/contracts";
import type { UIMessage } from "ai";

/** What the server's `start` chunk puts in `messageMetadata` (plus `usage` while streaming). */
export interface DexMessageMetadata {
  turnId?: string;
  usage?: Record<string, unknown>;
}

export type DexUIMessage = UIMessage<DexMessageMetadata>;
type Part = DexUIMessage["parts"][number];
type ToolPart = Extract<Part, { type: "dynamic-tool" }>;

/** The assistant message id of a turn, as the server's `start` chunk names it. */
export function messageIdOfTurn(turnId: string): string {
  return `msg_${turnId}`;
}

/** The UI message id of a stored user message. */
export function userMessageId(message: AgentMessage): string {
  return `user_${String(message.sequence)}`;
}

function parsedArguments(text: string | undefined): unknown {
  if (text === undefined || text === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Options of convertAgentSnapshotToUIMessages. */
export interface ConvertSnapshotOptions {
  /** Turns that steered messages started (the snapshot route's `steered_turns`). */
  readonly steeredTurns?: Iterable<string>;
}

class TurnBuilder {
  readonly parts: Part[] = [];
  private stepOpen = false;
  private readonly tools = new Map<string, ToolPart>();
  /** The turn being read: a steered turn goes on in the message of the turn it steered. */
  currentTurn: string;

  constructor(readonly turnId: string) {
    this.currentTurn = turnId;
  }

  private enterStep(): void {
    if (!this.stepOpen) {
      this.parts.push({ type: "step-start" });
      this.stepOpen = true;
    }
  }

  assistant(message: AgentMessage): void {
    this.enterStep();
    if (message.toolCallId !== undefined) {
      this.toolPart(message.toolCallId, message.toolName ?? "", parsedArguments(message.toolArguments));
      return;
    }
    if (message.text !== undefined && message.text !== "") {
      this.parts.push({ type: "text", text: message.text, state: "done" });
    }
  }

  toolResult(message: AgentMessage): void {
    const id = message.toolCallId ?? "";
    const part = this.tools.get(id) ?? this.toolPart(id, message.toolName ?? "", undefined);
    this.replace(part, { ...this.base(part), state: "output-available", output: message.toolOutput ?? "" });
    this.stepOpen = false;
  }

  steering(message: AgentMessage): void {
    this.parts.push({
      type: "steering-message",
      id: userMessageId(message),
      parts: [{ type: "text", text: message.text ?? "" }],
    });
    this.stepOpen = false;
  }

  /** The active turn: records and pending interrupts say what the messages do not yet. */
  overlay(records: readonly AgentToolCall[], interrupts: readonly AgentInterrupt[]): void {
    for (const record of records) {
      const asked = interrupts.find(
        (i) => i.toolCallId === record.toolCallId && i.kind === InterruptKind.TOOL_APPROVAL,
      );
      let part = this.tools.get(record.toolCallId);
      if (part === undefined) {
        this.enterStep();
        part = this.toolPart(record.toolCallId, record.toolName, parsedArguments(record.arguments));
      }
      const base = this.base(part);
      if (record.status === ToolCallStatus.AWAITING_APPROVAL && asked !== undefined) {
        this.replace(part, { ...base, state: "approval-requested", approval: { id: asked.interruptId } });
      } else if (record.status === ToolCallStatus.REJECTED) {
        this.replace(part, { ...base, state: "output-denied", approval: { id: record.toolCallId, approved: false } });
      } else if (record.status === ToolCallStatus.SUCCEEDED && part.state !== "output-available") {
        this.replace(part, { ...base, state: "output-available", output: record.output ?? "" });
      } else if (
        record.status === ToolCallStatus.FAILED ||
        record.status === ToolCallStatus.OUTCOME_UNKNOWN
      ) {
        const errorText = record.error ?? `the tool call ended ${ToolCallStatus[record.status].toLowerCase()}`;
        this.replace(part, { ...base, state: "output-error", errorText });
      }
    }
    for (const interrupt of interrupts) {
      if (interrupt.kind !== InterruptKind.QUESTION) continue;
      this.parts.push({
        type: `data-question`,
        id: interrupt.interruptId,
        data: {
          interruptId: interrupt.interruptId,
          toolCallId: interrupt.toolCallId,
          question: interrupt.question ?? null,
          choices: [...interrupt.choices],
          allowsFreeText: interrupt.allowsFreeText,
          answered: false,
        },
      } as Part);
    }
  }

  private base(part: ToolPart): Pick<ToolPart, "type" | "toolName" | "toolCallId"> & { input: unknown } {
    return { type: "dynamic-tool", toolName: part.toolName, toolCallId: part.toolCallId, input: part.input };
  }

  private toolPart(toolCallId: string, toolName: string, input: unknown): ToolPart {
    const known = this.tools.get(toolCallId);
    if (known !== undefined) return known;
    const part: ToolPart = { type: "dynamic-tool", toolName, toolCallId, state: "input-available", input };
    this.parts.push(part);
    this.tools.set(toolCallId, part);
    return part;
  }

  private replace(old: ToolPart, next: ToolPart): void {
    this.parts[this.parts.indexOf(old)] = next;
    this.tools.set(next.toolCallId, next);
  }
}

/**
 * The UIMessages of a snapshot's stored messages, oldest first: per turn its
 * opening user messages, then one assistant message. The active turn also shows
 * its tool call records: approvals asked (`approval-requested`, approval id =
 * interrupt id), outcomes not stored yet, and pending questions (`data-question`).
 *
 * The snapshot holds the last 200 messages, so the oldest turn may start midway.
 */
export function convertAgentSnapshotToUIMessages(
  snapshot: AgentSnapshot,
  options: ConvertSnapshotOptions = {},
): DexUIMessage[] {
  const steered = new Set(options.steeredTurns ?? []);
  const out: DexUIMessage[] = [];
  let turn: TurnBuilder | undefined;
  let opening = false; // reading the user messages a steered turn opens with
  const finish = (): void => {
    if (turn !== undefined && turn.parts.length > 0) {
      out.push({ id: messageIdOfTurn(turn.turnId), role: "assistant", metadata: { turnId: turn.turnId }, parts: turn.parts });
    }
    turn = undefined;
  };
  const activeTurn = snapshot.state?.activeTurnId;
  let overlaid = false;
  const overlay = (builder: TurnBuilder): void => {
    if (builder.currentTurn !== activeTurn || overlaid) return;
    overlaid = true;
    builder.overlay(
      snapshot.toolCalls.filter((r) => r.turnId === builder.currentTurn),
      snapshot.pendingInterrupts,
    );
  };
  for (const message of snapshot.messages) {
    if (turn !== undefined && turn.currentTurn !== message.turnId) {
      if (steered.has(message.turnId)) {
        turn.currentTurn = message.turnId;
        opening = true;
      } else {
        overlay(turn);
        finish();
      }
    }
    if (opening && message.role === MessageRole.USER) {
      turn!.steering(message);
      continue;
    }
    opening = false;
    if (message.role === MessageRole.USER && (turn === undefined || turn.parts.length === 0)) {
      out.push({ id: userMessageId(message), role: "user", parts: [{ type: "text", text: message.text ?? "" }] });
      turn ??= new TurnBuilder(message.turnId);
      continue;
    }
    turn ??= new TurnBuilder(message.turnId);
    if (message.role === MessageRole.USER) turn.steering(message);
    else if (message.role === MessageRole.TOOL) turn.toolResult(message);
    else turn.assistant(message);
  }
  if (activeTurn !== undefined && activeTurn !== "" && !overlaid) {
    if (turn === undefined || turn.currentTurn !== activeTurn) {
      finish();
      turn = new TurnBuilder(activeTurn);
    }
    overlay(turn);
  }
  finish();
  return out;
}
