/**
 * The chat of one session: useChat on DexChatTransport, tool calls with
 * approve / reject buttons, and questions with their answer buttons.
 *
 * @module
 */

import { useChat } from "@ai-sdk/react";
import { DexChatTransport, type DexUIMessage } from "@dex-agents/ui";
import { lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { type FormEvent, useMemo, useState } from "react";

import { type ConsoleApi, describeFailure } from "./api.js";

type Part = DexUIMessage["parts"][number];
type ToolPart = Extract<Part, { type: "dynamic-tool" }>;

interface QuestionData {
  readonly interruptId: string;
  readonly question: string;
  readonly choices: readonly string[];
  readonly allowsFreeText: boolean;
}

function asQuestion(data: unknown): QuestionData | null {
  if (typeof data !== "object" || data === null) return null;
  const value = data as Partial<QuestionData>;
  if (typeof value.interruptId !== "string" || typeof value.question !== "string") return null;
  return {
    interruptId: value.interruptId,
    question: value.question,
    choices: Array.isArray(value.choices) ? value.choices.filter((c): c is string => typeof c === "string") : [],
    allowsFreeText: value.allowsFreeText === true,
  };
}

function json(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function ToolCall({
  part,
  onDecide,
}: {
  readonly part: ToolPart;
  readonly onDecide: (approvalId: string, approved: boolean, reason?: string) => void;
}) {
  const [reason, setReason] = useState("");
  const approval = part.state === "approval-requested" ? part.approval : undefined;
  return (
    <div className={`tool tool-${part.state}`} data-tool={part.toolName} data-state={part.state}>
      <div>
        <strong>{part.toolName}</strong> <code>{json(part.input ?? {})}</code>{" "}
        <span className="tool-state">{part.state.replace(/-/g, " ")}</span>
      </div>
      {part.state === "output-available" ? <pre className="tool-output">{json(part.output)}</pre> : null}
      {part.state === "output-error" ? <pre className="tool-output error">{part.errorText}</pre> : null}
      {approval ? (
        <div className="approval">
          <span>This call waits for your approval.</span>
          <button type="button" className="approve" onClick={() => onDecide(approval.id, true)}>
            Approve
          </button>
          <input
            aria-label="rejection reason"
            placeholder="reason (optional)"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
          <button type="button" className="reject" onClick={() => onDecide(approval.id, false, reason || undefined)}>
            Reject
          </button>
        </div>
      ) : null}
    </div>
  );
}

function Question({
  question,
  answered,
  onAnswer,
}: {
  readonly question: QuestionData;
  readonly answered: string | undefined;
  readonly onAnswer: (interruptId: string, answer: string) => void;
}) {
  const [text, setText] = useState("");
  if (answered !== undefined) {
    return (
      <div className="question answered" data-question={question.interruptId}>
        {question.question} <em>You answered: {answered}</em>
      </div>
    );
  }
  return (
    <div className="question" data-question={question.interruptId}>
      <div>{question.question}</div>
      {question.choices.map((choice) => (
        <button type="button" key={choice} className="choice" onClick={() => onAnswer(question.interruptId, choice)}>
          {choice}
        </button>
      ))}
      {question.allowsFreeText || question.choices.length === 0 ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) onAnswer(question.interruptId, text.trim());
          }}
        >
          <input aria-label="answer" value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit">Answer</button>
        </form>
      ) : null}
    </div>
  );
}

export function Chat({
  api,
  sessionId,
  initialMessages,
  onActivity,
}: {
  readonly api: ConsoleApi;
  readonly sessionId: string;
  readonly initialMessages: DexUIMessage[];
  /** Called when a response ends, so the timeline refreshes at once. */
  readonly onActivity: () => void;
}) {
  const transport = useMemo(() => new DexChatTransport<DexUIMessage>({ api: api.base }), [api]);
  const [draft, setDraft] = useState("");
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<string | null>(null);
  const { messages, sendMessage, status, error, addToolApprovalResponse, clearError } = useChat<DexUIMessage>({
    id: sessionId,
    transport,
    messages: initialMessages,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: onActivity,
    onError: onActivity,
  });
  const busy = status === "submitted" || status === "streaming";

  const send = (event: FormEvent) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text || busy) return;
    setDraft("");
    setProblem(null);
    clearError();
    void sendMessage({ text });
  };

  const decide = (approvalId: string, approved: boolean, reason?: string) => {
    setProblem(null);
    void addToolApprovalResponse({ id: approvalId, approved, ...(reason ? { reason } : {}) });
  };

  const answer = (interruptId: string, text: string) => {
    setProblem(null);
    api.answer(sessionId, interruptId, text).then(
      (accepted) => {
        if (accepted) setAnswers((a) => ({ ...a, [interruptId]: text }));
        else setProblem("The question was no longer pending: it was answered or timed out.");
        onActivity();
      },
      (failure: unknown) => setProblem(describeFailure(failure, api.base)),
    );
  };

  const shown = problem ?? (error ? describeFailure(error, api.base) : null);
  return (
    <div className="chat">
      <div className="messages" data-testid="messages">
        {messages.length === 0 ? <p className="muted">No messages yet: say something.</p> : null}
        {messages.map((message) => (
          <div key={message.id} className={`message ${message.role}`} data-role={message.role}>
            {message.parts.map((part, index) => {
              const key = `${message.id}-${index}`;
              if (part.type === "text") return <p key={key} className="text">{part.text}</p>;
              if (part.type === "reasoning") {
                return (
                  <p key={key} className="reasoning">
                    {part.text}
                  </p>
                );
              }
              if (part.type === "dynamic-tool") return <ToolCall key={key} part={part} onDecide={decide} />;
              if (part.type === "data-question") {
                const question = asQuestion(part.data);
                return question ? (
                  <Question key={key} question={question} answered={answers[question.interruptId]} onAnswer={answer} />
                ) : null;
              }
              return null;
            })}
          </div>
        ))}
        {busy ? <p className="muted status">The agent is working…</p> : null}
      </div>
      {shown ? (
        <p className="problem" role="alert" data-testid="chat-problem">
          {shown}
        </p>
      ) : null}
      <form className="composer" onSubmit={send}>
        <input
          aria-label="message"
          placeholder="Message the agent"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
    </div>
  );
}
