/**
 * The tool Step a framework's tool body runs in, defined once for every
 * adapter (the Python kit's `DexRunInfo`): a runner wraps the framework's tool
 * call in `withRunInfo(runInfoOfToolStep(call), ...)` and the body reads
 * `dexRunInfo()?.idempotencyKey`. It travels in `AsyncLocalStorage`, so tools
 * need no Dex-specific context type. A gated body that the framework runs in
 * `RunModel` hands back its stored result (`withStoredResults`, `storedResult`)
 * instead of running again.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import type { DeferredToolExecution } from "./runner.js";

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

/** The identity of the tool Step `call` runs in. */
export function runInfoOfToolStep(call: DeferredToolExecution): DexRunInfo {
  return {
    flowId: call.flowId,
    turnId: call.turnId,
    attempt: call.attempt,
    toolCallId: call.toolCall.toolCallId,
    idempotencyKey: call.idempotencyKey,
  };
}

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
 * The recorded output of an approved call. A runner approves only calls it
 * has a result for, so a miss means the framework ran a tool it was not asked to.
 */
export function storedResult(toolName: string, callId: string | undefined): string {
  const result = callId === undefined ? undefined : storedResults.getStore()?.get(callId);
  if (result === undefined) {
    throw new Error(`the gated tool ${JSON.stringify(toolName)} ran call ${JSON.stringify(callId)} without a stored result`);
  }
  return result;
}
