/**
 * `DexSessionClient`: the session RPCs of `dex_agents.http`
 * (`POST /sessions/{id}/send`, `steer`, `cancel`, `resolve`, `answer`,
 * `settings`), each answered `true` or `false` by the session.
 *
 * A POST whose answer never arrives may or may not have reached the session.
 * Every call therefore carries a client request ID (a fresh one unless the
 * caller passes `clientRequestId`) and sends it again on each retry, so the
 * session applies the request once and a retry gets the first answer. Calls
 * are retried when fetch itself fails (the connection dropped or was refused)
 * and on 502, 503 and 504; any other refusal is thrown at once.
 *
 * @module
 */

import { DexHttpError, type FetchFunction, refusal, sessionUrl } from "./http.js";

export interface DexSessionClientOptions {
  /** Base URL of the `dex_agents.http` app, e.g. `http://127.0.0.1:8000`. */
  readonly api: string;
  readonly fetch?: FetchFunction;
  /** Headers sent on every request. */
  readonly headers?: Record<string, string>;
  /** Attempts in all for a call that gets no answer (default 5). */
  readonly maxAttempts?: number;
  /** Wait before the first retry, doubled for each later one up to 2 s (default 100 ms). */
  readonly retryDelayMs?: number;
}

/** What every call accepts beside its own fields. */
export interface CallOptions {
  /** Names this request across retries, including a caller's own (1 to 128 of `A-Za-z0-9._:-`). */
  readonly clientRequestId?: string;
  readonly signal?: AbortSignal;
}

/** Every attempt of a call went unanswered; repeating it with `clientRequestId` is safe. */
export class DexRequestUnansweredError extends Error {
  override readonly name = "DexRequestUnansweredError";
  readonly clientRequestId: string;
  readonly attempts: number;

  constructor(what: string, clientRequestId: string, attempts: number, cause: unknown) {
    super(
      `${what}: no answer in ${attempts} attempts (${String(cause)}); the request may have ` +
        `taken effect, and repeating it with client request ID ${clientRequestId} is safe`,
      { cause },
    );
    this.clientRequestId = clientRequestId;
    this.attempts = attempts;
  }
}

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
const UNANSWERED_STATUSES = new Set([502, 503, 504]);
const MAX_DELAY_MS = 2000;

/** Why `id` cannot be a client request ID (the session's own rule), or undefined. */
export function clientRequestIdProblem(id: string): string | undefined {
  return ID_PATTERN.test(id) ? undefined : `client request ID ${JSON.stringify(id)} must be 1 to 128 of A-Z a-z 0-9 . _ : -`;
}

export class DexSessionClient {
  private readonly options: DexSessionClientOptions;
  private readonly doFetch: FetchFunction;

  constructor(options: DexSessionClientOptions) {
    this.options = options;
    this.doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Queues a user message; false for blank text, or `planMode` without plan mode. */
  sendUserMessage(sessionId: string, text: string, options: CallOptions & { readonly planMode?: boolean } = {}): Promise<boolean> {
    return this.call(sessionId, "send", { text, plan_mode: options.planMode ?? false }, options);
  }

  /** Redirects the active turn with new text or a queued message; queues it while no turn runs. */
  steerUserMessage(sessionId: string, steer: { readonly text: string } | { readonly messageId: string }, options: CallOptions = {}): Promise<boolean> {
    const body = "text" in steer ? { text: steer.text } : { message_id: steer.messageId };
    return this.call(sessionId, "steer", body, options);
  }

  /** Stops the active turn (or only `turnId`); true once the request is recorded. */
  cancelTurn(sessionId: string, options: CallOptions & { readonly turnId?: string } = {}): Promise<boolean> {
    return this.call(sessionId, "cancel", { turn_id: options.turnId ?? null }, options);
  }

  /** Approves or rejects a pending interrupt; false when it is not pending. */
  resolveInterrupt(
    sessionId: string,
    interruptId: string,
    options: CallOptions & { readonly approved: boolean; readonly rejectionMessage?: string },
  ): Promise<boolean> {
    const body = { interrupt_id: interruptId, approved: options.approved, rejection_message: options.rejectionMessage ?? null };
    return this.call(sessionId, "resolve", body, options);
  }

  /** Answers a pending question; false when it is not pending or the answer is refused. */
  answerQuestion(sessionId: string, interruptId: string, answer: string, options: CallOptions = {}): Promise<boolean> {
    return this.call(sessionId, "answer", { interrupt_id: interruptId, answer }, options);
  }

  /** Replaces the settings the next turn starts with; `{}` clears them. */
  updateSessionSettings(sessionId: string, settings: Record<string, unknown>, options: CallOptions = {}): Promise<boolean> {
    return this.call(sessionId, "settings", { session_settings: settings }, options);
  }

  private async call(sessionId: string, route: string, fields: Record<string, unknown>, options: CallOptions): Promise<boolean> {
    const id = options.clientRequestId ?? globalThis.crypto.randomUUID();
    const problem = clientRequestIdProblem(id);
    if (problem !== undefined) throw new TypeError(problem);
    const what = `POST ${route} of ${sessionId}`;
    const init: RequestInit = {
      method: "POST",
      headers: { ...this.options.headers, "content-type": "application/json" },
      body: JSON.stringify({ ...fields, client_request_id: id }),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    const attempts = Math.max(1, this.options.maxAttempts ?? 5);
    let delay = this.options.retryDelayMs ?? 100;
    let lastError: unknown;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      options.signal?.throwIfAborted();
      if (attempt > 1) {
        await sleep(delay, options.signal);
        delay = Math.min(delay * 2, MAX_DELAY_MS);
      }
      let response: Response;
      try {
        response = await this.doFetch(sessionUrl(this.options.api, sessionId, route), init);
      } catch (error) {
        options.signal?.throwIfAborted();
        lastError = error; // no answer: the connection dropped, or the server is down
        continue;
      }
      if (response.ok) return answerOf(await response.json(), what);
      const refused = await refusal(response, what);
      if (!UNANSWERED_STATUSES.has(response.status)) throw refused;
      lastError = refused;
    }
    throw new DexRequestUnansweredError(what, id, attempts, lastError);
  }
}

function answerOf(body: unknown, what: string): boolean {
  const result = typeof body === "object" && body !== null ? (body as { result?: unknown }).result : undefined;
  if (typeof result !== "boolean") throw new DexHttpError(200, `${what} answered without a boolean 'result'`);
  return result;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted(): void {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
