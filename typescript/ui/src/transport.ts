/**
 * `DexChatTransport`: a ChatTransport for the AI SDK's `useChat` over the UI
 * message stream of `dex_agents.http` (`/sessions/{chatId}/ui-stream`).
 *
 * The stock transport drops SSE ids, so it cannot resume. This one keeps the
 * `u1.` token of every chunk, and when a live response ends before `finish`
 * or throws (Node's `TypeError: terminated`, which useChat's own disconnect
 * check misses), it reconnects with `Last-Event-ID` and `?exact=1` into the
 * same stream, so the message carries on where it stopped. `reconnectToStream`
 * (useChat `resume: true`, a page reload) replays the active turn from its
 * start instead (`resumeStreamIsReplay`), which rebuilds any browser state.
 *
 * @module
 */

import { asSchema, type ChatRequestOptions, type ChatTransport, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai";

import { type FetchFunction, refusal, sessionUrl } from "./http.js";
import { readSse } from "./sse.js";

export interface DexChatTransportOptions {
  /** Base URL of the `dex_agents.http` app, e.g. `http://127.0.0.1:8000`. */
  readonly api: string;
  readonly fetch?: FetchFunction;
  /** Headers sent on every request (merged under per-request ones). */
  readonly headers?: Record<string, string>;
  /** Reconnects in a row that bring no chunk before the stream errors (default 3). */
  readonly maxConsecutiveErrors?: number;
  /** Called with the token of every chunk received (to persist for a later exact resume). */
  readonly onToken?: (chatId: string, token: string) => void;
  /** Called before each reconnect with why the response stopped (e.g. to show "reconnecting"). */
  readonly onReconnect?: (chatId: string, reason: unknown) => void;
}

const TERMINAL = new Set(["finish", "error", "abort"]);

type Validate = (value: unknown) => Promise<UIMessageChunk>;

function chunkValidator(): Validate {
  const schema = asSchema(uiMessageChunkSchema);
  return async (value) => {
    if (schema.validate === undefined) return value as UIMessageChunk;
    const result = await schema.validate(value);
    if (!result.success) throw result.error;
    return result.value;
  };
}

class InvalidChunk extends Error {
  override readonly name = "InvalidChunk";
}

function headersOf(...sets: (ChatRequestOptions["headers"] | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const set of sets) {
    if (set === undefined) continue;
    new Headers(set).forEach((value, key) => {
      out[key] = value;
    });
  }
  return out;
}

export class DexChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  readonly resumeStreamIsReplay = true;
  private readonly options: DexChatTransportOptions;
  private readonly doFetch: FetchFunction;
  private readonly validate = chunkValidator();

  constructor(options: DexChatTransportOptions) {
    this.options = options;
    this.doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  }

  async sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const last = options.messages.at(-1);
    if (last === undefined) throw new Error("sendMessages needs at least one message");
    // The server reads only the last message: the user's text or the approval answers.
    const body = JSON.stringify({
      ...(options.body ?? {}),
      id: options.chatId,
      trigger: options.trigger,
      messageId: options.messageId,
      messages: [last],
    });
    const headers = headersOf(this.options.headers, options.headers, { "content-type": "application/json" });
    const response = await this.doFetch(sessionUrl(this.options.api, options.chatId, "ui-stream"), {
      method: "POST",
      headers,
      body,
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
    });
    if (!response.ok) throw await refusal(response, `POST ui-stream of ${options.chatId}`);
    return this.follow(options.chatId, response, options.abortSignal, options.headers);
  }

  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const response = await this.open(options.chatId, undefined, options.abortSignal, options.headers);
    if (response === null) return null;
    return this.follow(options.chatId, response, options.abortSignal, options.headers);
  }

  /** GET the chat's stream: after `token` exactly, or the active turn from its start; null on 204. */
  private async open(
    chatId: string,
    token: string | undefined,
    signal: AbortSignal | undefined,
    extra: ChatRequestOptions["headers"] | undefined,
  ): Promise<Response | null> {
    const headers = headersOf(this.options.headers, extra, { accept: "text/event-stream" });
    let url = sessionUrl(this.options.api, chatId, "ui-stream");
    if (token !== undefined) {
      headers["last-event-id"] = token;
      url += "?exact=1";
    }
    const response = await this.doFetch(url, { headers, ...(signal ? { signal } : {}) });
    if (response.status === 204) return null;
    if (!response.ok) throw await refusal(response, `GET ui-stream of ${chatId}`);
    return response;
  }

  private follow(
    chatId: string,
    first: Response,
    signal: AbortSignal | undefined,
    extra: ChatRequestOptions["headers"] | undefined,
  ): ReadableStream<UIMessageChunk> {
    const chunks = this.chunks(chatId, first, signal, extra);
    return new ReadableStream<UIMessageChunk>({
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        } catch (error) {
          controller.error(error);
        }
      },
      async cancel() {
        await chunks.return(undefined);
      },
    });
  }

  private async *chunks(
    chatId: string,
    first: Response,
    signal: AbortSignal | undefined,
    extra: ChatRequestOptions["headers"] | undefined,
  ): AsyncGenerator<UIMessageChunk> {
    const limit = this.options.maxConsecutiveErrors ?? 3;
    let response: Response | null = first;
    let token: string | undefined;
    let failures = 0;
    let lastError: unknown;
    while (response !== null) {
      let progressed = false;
      try {
        if (response.body === null) throw new Error("the UI stream response has no body");
        for await (const message of readSse(response.body)) {
          if (message.data === "[DONE]") return;
          let chunk: UIMessageChunk;
          try {
            chunk = await this.validate(JSON.parse(message.data));
          } catch (error) {
            throw new InvalidChunk(`invalid UI stream chunk ${message.data.slice(0, 200)}: ${String(error)}`);
          }
          if (message.id !== undefined) {
            token = message.id;
            this.options.onToken?.(chatId, token);
          }
          progressed = true;
          yield chunk;
          if (TERMINAL.has(chunk.type)) return;
        }
        lastError = new Error("the UI stream ended before its turn finished");
      } catch (error) {
        if (error instanceof InvalidChunk || signal?.aborted) throw error;
        lastError = error;
      }
      failures = progressed ? 0 : failures + 1;
      if (failures >= limit) throw lastError;
      this.options.onReconnect?.(chatId, lastError);
      response = await this.reopen(chatId, token, signal, extra, limit - failures);
    }
  }

  private async reopen(
    chatId: string,
    token: string | undefined,
    signal: AbortSignal | undefined,
    extra: ChatRequestOptions["headers"] | undefined,
    tries: number,
  ): Promise<Response | null> {
    let lastError: unknown;
    for (let attempt = 0; attempt < tries; attempt++) {
      signal?.throwIfAborted();
      try {
        return await this.open(chatId, token, signal, extra);
      } catch (error) {
        if (signal?.aborted) throw error;
        if (error instanceof Error && "status" in error && (error.status as number) < 500) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }
}
