/**
 * A deferred tool call as a tool Step hands it to a runner on its first attempt,
 * for unit tests that call `executeDeferredToolCall` without a session.
 *
 * @module
 */

import type { AgentToolCall } from "@dex-agents/contracts";
import type { DeferredToolExecution } from "../runner.js";

/** Session `s1`, `turn-1`, attempt 1, the session's idempotency key, no tasks, no answers. */
export function deferredExecution(record: AgentToolCall): DeferredToolExecution {
  return {
    flowId: "s1",
    turnId: "turn-1",
    toolCall: record,
    idempotencyKey: `s1/turn-1/${record.toolCallId}`,
    attempt: 1,
    events: { write: () => {}, writeRaw: () => {} },
    heartbeat: async () => {},
    saveHeartbeatCheckpoint: async () => {},
    heartbeatCheckpoint: undefined,
    inputAnswers: [],
    supportsToolTasks: false,
    cancellationSignal: new AbortController().signal,
  };
}
