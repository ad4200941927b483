/**
 * Test support for sidecar tests: a run log in a file (JSON lines, each
 * synced before the caller goes on, so the runs of a SIGKILLed sidecar still
 * count) and gate files that hold a model call or tool until a test opens
 * them. The same contract as `dex_agents_testing.RunLog` and `WorkerApp.gate`.
 *
 * @module
 */

import { closeSync, existsSync, fsyncSync, openSync, writeSync } from "node:fs";

export class RunLog {
  readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  append(kind: string, fields: Record<string, unknown>): void {
    this.write({ kind, ...fields });
  }

  /** One JSON line, synced before it returns. */
  write(entry: Record<string, unknown>): void {
    const fd = openSync(this.path, "a");
    try {
      writeSync(fd, `${JSON.stringify(entry)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  gate(name: string): string {
    return `${this.path}.${name}-gate`;
  }

  /** Resolves once the gate file exists; rejects with the signal's reason when it aborts. */
  waitForGate(name: string, signal?: AbortSignal): Promise<void> {
    const path = this.gate(name);
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (signal?.aborted) {
          clearInterval(timer);
          reject(signal.reason);
        } else if (existsSync(path)) {
          clearInterval(timer);
          resolve();
        }
      };
      const timer = setInterval(check, 10);
      signal?.addEventListener("abort", check, { once: true });
      check();
    });
  }
}
