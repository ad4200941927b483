/**
 * The console's reads and the RPCs its buttons call, with every failure turned
 * into one sentence for the page (never a stack trace).
 *
 * @module
 */

import { DexHttpError, DexRequestUnansweredError, DexSessionClient } from "@dex-agents/ui";

/** One session of the app's Flow type (`GET /console/api/sessions`). */
export interface SessionSummary {
  readonly session_id: string;
  readonly status: string;
  readonly started_at: string | null;
  readonly closed_at: string | null;
}

/** One entry of the Step timeline, as `dex-agents inspect` prints it (dex_agents.chat._timeline). */
export interface TimelineEntry {
  readonly at_seconds: number;
  /** `wait`, `execute`, `rpc`, `closed`, or `running` / `waiting` for active Steps. */
  readonly kind: string;
  readonly name: string;
  readonly step_type: string;
  readonly turn: number;
  readonly duration_seconds: number | null;
  readonly attempts: number;
  readonly failed: boolean;
  readonly notes: readonly string[];
}

export interface SessionTimeline {
  readonly session_id: string;
  readonly flow_type: string;
  readonly run_id: string;
  readonly status: string;
  readonly running: boolean;
  readonly entries: readonly TimelineEntry[];
}

/** A fetch that never reached the server (it is down, or the network dropped). */
export class ServerUnreachable extends Error {
  override readonly name = "ServerUnreachable";
}

/** What to show for a failure: the server's own words for a refusal, else what was lost. */
export function describeFailure(error: unknown, base: string): string {
  if (error instanceof ServerUnreachable || error instanceof DexRequestUnansweredError) {
    return unreachableText(base);
  }
  if (error instanceof DexHttpError) return serverText(error.message);
  if (error instanceof TypeError || (error instanceof Error && /fetch|network|terminated/i.test(error.message))) {
    return unreachableText(base);
  }
  if (error instanceof Error) return firstLine(error.message) || error.name;
  return String(error);
}

function unreachableText(base: string): string {
  return `Lost the connection to the console server at ${base}: is \`dex-agents serve\` still running?`;
}

/** DexHttpError messages read `GET snapshot of x answered 404: no session ...`; keep the reason. */
function serverText(message: string): string {
  const found = /answered \d+: (.*)$/s.exec(message);
  return firstLine(found?.[1] ?? message);
}

function firstLine(text: string): string {
  return text.trim().split("\n")[0] ?? "";
}

async function refused(response: Response, what: string): Promise<DexHttpError> {
  let detail = response.statusText;
  try {
    const body = (await response.json()) as { error?: unknown };
    if (typeof body.error === "string") detail = body.error;
  } catch {
    // not JSON: keep the status text
  }
  return new DexHttpError(response.status, `${what} answered ${response.status}: ${detail}`);
}

export class ConsoleApi {
  readonly base: string;
  private readonly sessions: DexSessionClient;

  /** `base`: the app's origin (the console is served from `${base}/console/`). */
  constructor(base: string) {
    this.base = base.replace(/\/+$/, "");
    this.sessions = new DexSessionClient({ api: this.base });
  }

  private async request(path: string, what: string, init?: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, init);
    } catch {
      throw new ServerUnreachable(unreachableText(this.base));
    }
    if (!response.ok) throw await refused(response, what);
    return response.json();
  }

  async listSessions(): Promise<SessionSummary[]> {
    const body = (await this.request("/console/api/sessions", "GET sessions")) as { sessions: SessionSummary[] };
    return body.sessions;
  }

  async startSession(): Promise<string> {
    const body = (await this.request("/console/api/sessions", "POST sessions", { method: "POST" })) as {
      session_id: string;
    };
    return body.session_id;
  }

  timeline(sessionId: string): Promise<SessionTimeline> {
    const path = `/console/api/sessions/${encodeURIComponent(sessionId)}/timeline`;
    return this.request(path, `GET timeline of ${sessionId}`) as Promise<SessionTimeline>;
  }

  /**
   * POST /sessions/{id}/answer: a question's answer (a choice or free text), retried
   * under one client request ID when the answer to it is lost, so it applies once.
   */
  answer(sessionId: string, interruptId: string, answer: string): Promise<boolean> {
    return this.sessions.answerQuestion(sessionId, interruptId, answer);
  }
}
