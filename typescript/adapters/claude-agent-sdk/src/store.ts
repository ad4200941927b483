/**
 * A `SessionStore` for one RunModel: seeded from what Dex stored, collecting
 * what the CLI mirrors during the run. The CLI resumes from it, so it is the
 * only copy of the transcript the CLI sees; nothing stays on the Worker's disk.
 *
 * @module
 */

import type { SessionKey, SessionStore, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import type { TranscriptEntry } from "./transcript.js";

export class RunSessionStore implements SessionStore {
  readonly #entries = new Map<string, Record<string, unknown>[]>();
  /** What the CLI mirrored during this run, in order. */
  readonly appended: TranscriptEntry[] = [];

  constructor(readonly sessionId: string, entries: readonly TranscriptEntry[]) {
    for (const [subpath, entry] of entries) this.#list(subpath).push(entry);
  }

  #list(subpath: string): Record<string, unknown>[] {
    let list = this.#entries.get(subpath);
    if (list === undefined) this.#entries.set(subpath, (list = []));
    return list;
  }

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    if (key.sessionId !== this.sessionId) {
      throw new Error(`the CLI wrote session ${key.sessionId}, not this session's ${this.sessionId}; forkSession and continue are not supported`);
    }
    for (const entry of entries) {
      const plain = structuredClone(entry) as Record<string, unknown>;
      this.#list(key.subpath ?? "").push(plain);
      this.appended.push([key.subpath ?? "", plain]);
    }
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const list = key.sessionId === this.sessionId ? this.#entries.get(key.subpath ?? "") : undefined;
    return list === undefined ? null : (structuredClone(list) as SessionStoreEntry[]);
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    return key.sessionId === this.sessionId ? [...this.#entries.keys()].filter((s) => s !== "") : [];
  }
}
