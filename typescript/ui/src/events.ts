/**
 * The typed client of a session's plain SSE of AgentEvents
 * (`GET /sessions/{id}/events`) and of its UI snapshot
 * (`GET /sessions/{id}/snapshot`), both decoded by the generated contracts.
 *
 * @module
 */

import { type AgentEvent, type AgentSnapshot, decodeAgentEvent, decodeAgentSnapshot } from "@dex-agents/contracts";

import { type FetchFunction, refusal, sessionUrl } from "./http.js";
import { readSse } from "./sse.js";

/** One AgentEvent and the Dex resume token to read on from just after it. */
export interface AgentEventMessage {
  readonly event: AgentEvent;
  readonly resumeToken: string;
}

/** The snapshot without its Step-only fields, and the token to open the events from. */
export interface UiSnapshot {
  readonly snapshot: AgentSnapshot;
  readonly resumeToken: string;
  /** Turns steering started, among the newest events: convertAgentSnapshotToUIMessages' `steeredTurns`. */
  readonly steeredTurns: readonly string[];
}

export interface AgentEventsOptions {
  /** Resume after this Dex token ("" or absent: from the oldest retained event). */
  readonly after?: string;
  readonly signal?: AbortSignal;
  readonly fetch?: FetchFunction;
  /** Consecutive failed connections before giving up (default 3). */
  readonly maxConsecutiveErrors?: number;
}

/** GET the snapshot; throws DexHttpError on a refusal (404 for an unknown session). */
export async function fetchUiSnapshot(
  baseUrl: string,
  sessionId: string,
  options: { readonly signal?: AbortSignal; readonly fetch?: FetchFunction } = {},
): Promise<UiSnapshot> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const init: RequestInit = options.signal ? { signal: options.signal } : {};
  const response = await doFetch(sessionUrl(baseUrl, sessionId, "snapshot"), init);
  if (!response.ok) throw await refusal(response, `GET snapshot of ${sessionId}`);
  const body = (await response.json()) as { snapshot?: unknown; resume_token?: unknown; steered_turns?: unknown };
  if (typeof body.resume_token !== "string" || typeof body.snapshot !== "object" || body.snapshot === null) {
    throw new Error(`GET snapshot of ${sessionId}: the body lacks 'snapshot' or 'resume_token'`);
  }
  const steered = body.steered_turns ?? [];
  if (!Array.isArray(steered) || !steered.every((t): t is string => typeof t === "string")) {
    throw new Error(`GET snapshot of ${sessionId}: 'steered_turns' is not an array of strings`);
  }
  return {
    snapshot: decodeAgentSnapshot(JSON.stringify(body.snapshot)),
    resumeToken: body.resume_token,
    steeredTurns: steered,
  };
}

/**
 * The session's AgentEvents from `after` on, for as long as the caller reads.
 *
 * A connection that ends or drops is reopened with `Last-Event-ID` set to the
 * last id received, as an EventSource does, so no event is lost or repeated.
 * A refused token (400) or unknown session (404) throws DexHttpError; 204 ends.
 */
export async function* streamAgentEvents(
  baseUrl: string,
  sessionId: string,
  options: AgentEventsOptions = {},
): AsyncGenerator<AgentEventMessage> {
  const doFetch = options.fetch ?? globalThis.fetch;
  const limit = options.maxConsecutiveErrors ?? 3;
  let token = options.after ?? "";
  let errors = 0;
  const url = sessionUrl(baseUrl, sessionId, "events");
  for (;;) {
    options.signal?.throwIfAborted();
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (token) headers["last-event-id"] = token;
    let response: Response;
    try {
      response = await doFetch(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      options.signal?.throwIfAborted();
      if (++errors >= limit) throw error;
      continue;
    }
    if (response.status === 204) return;
    if (!response.ok || response.body === null) {
      const refused = await refusal(response, `GET events of ${sessionId}`);
      if (response.status >= 400 && response.status < 500) throw refused;
      if (++errors >= limit) throw refused;
      continue;
    }
    try {
      for await (const message of readSse(response.body)) {
        if (message.id === undefined) continue;
        const event = decodeAgentEvent(message.data);
        token = message.id;
        errors = 0;
        yield { event, resumeToken: token };
      }
    } catch (error) {
      options.signal?.throwIfAborted();
      if (error instanceof Error && error.name === "WireFormatError") throw error;
      if (++errors >= limit) throw error;
    }
  }
}
