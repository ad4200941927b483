/**
 * `@dex-agents/ui`: browser and Node clients of the `dex_agents.http` app.
 *
 * - `DexChatTransport`: a ChatTransport for the AI SDK's `useChat` that resumes
 *   a dropped response with the server's `u1.` tokens.
 * - `convertAgentSnapshotToUIMessages`: a snapshot's stored messages as the
 *   UIMessages the UI message stream builds (one turn, one assistant message).
 * - `streamAgentEvents` / `fetchUiSnapshot`: the typed SSE client of AgentEvents
 *   (Last-Event-ID resume) and the snapshot, on `@dex-agents/contracts`.
 * - `DexSessionClient`: the session RPCs (send, steer, cancel, resolve, answer,
 *   settings), each under a client request ID it repeats on every retry.
 *
 * @module
 */

export { type AgentEventMessage, type AgentEventsOptions, fetchUiSnapshot, streamAgentEvents, type UiSnapshot } from "./events.js";
export { DexHttpError, type FetchFunction } from "./http.js";
export {
  convertAgentSnapshotToUIMessages,
  type ConvertSnapshotOptions,
  type DexMessageMetadata,
  type DexUIMessage,
  messageIdOfTurn,
  userMessageId,
} from "./messages.js";
export {
  type CallOptions,
  clientRequestIdProblem,
  DexRequestUnansweredError,
  DexSessionClient,
  type DexSessionClientOptions,
} from "./session.js";
export { readSse, type SseMessage } from "./sse.js";
export { decodeUiStreamToken, encodeUiStreamToken, type UiStreamToken } from "./token.js";
export { DexChatTransport, type DexChatTransportOptions } from "./transport.js";
