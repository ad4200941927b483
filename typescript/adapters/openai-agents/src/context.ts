/**
 * What a tool body can ask about the Dex Step it runs in, and the stored
 * results a resumed run's gated tools hand back. Both travel in
 * `AsyncLocalStorage`, so tools need no Dex-specific run context type.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

/** The Dex Step a model call or tool call runs in. */
export interface DexRunInfo {
  readonly flowId: string;
  readonly turnId: string;
  readonly attempt: number;
  /** Set in a tool Step. */
  readonly toolCallId?: string | undefined;
  /** `<flowId>/<turnId>/<toolCallId>`, the same on every attempt of a tool Step. */
  readonly idempotencyKey?: string | undefined;
}

const runInfo = new AsyncLocalStorage<DexRunInfo>();
const storedResults = new AsyncLocalStorage<ReadonlyMap<string, string>>();

/** The Dex Step the calling code runs in, or undefined outside the runner. */
export function dexRunInfo(): DexRunInfo | undefined {
  return runInfo.getStore();
}

export function withRunInfo<T>(info: DexRunInfo, run: () => Promise<T>): Promise<T> {
  return runInfo.run(info, run);
}

export function withStoredResults<T>(results: ReadonlyMap<string, string>, run: () => Promise<T>): Promise<T> {
  return storedResults.run(results, run);
}

/**
 * The recorded output of an approved call. The runner approves only calls it
 * has a result for, so a miss means the SDK ran a tool it was not asked to.
 */
export function storedResult(toolName: string, callId: string | undefined): string {
  const result = callId === undefined ? undefined : storedResults.getStore()?.get(callId);
  if (result === undefined) {
    throw new Error(`the gated tool ${JSON.stringify(toolName)} ran call ${JSON.stringify(callId)} without a stored result`);
  }
  return result;
}
