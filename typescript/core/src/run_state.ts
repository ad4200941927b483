/**
 * The run-state envelope: every TypeScript adapter's framework run state,
 * versioned alike (the Python kit's `RunStateFormat`). An adapter declares its
 * format once (its name, its payload's schema version, the framework package
 * it wraps) and hands it plain JSON data; the envelope (`RunStateEnvelope` in
 * runner.proto) says who wrote the payload and in which layout, so another
 * adapter's state, or a layout this build cannot read, fails with one
 * `RunStateError` naming the adapter and both versions.
 *
 * States written before the envelope (sessions in flight across an upgrade)
 * carry the adapter's own layout; its `legacy` reader turns such a state into
 * today's payload, so those turns resume as they would have.
 *
 * @module
 */

import { createRequire } from "node:module";
import { create } from "@bufbuild/protobuf";
import { decodeRunStateEnvelope, encodeRunStateEnvelope, RunStateEnvelopeSchema } from "@dex-agents/contracts";
import { RunStateError } from "./errors.js";

/** A pre-envelope state's parsed JSON as today's payload; undefined when it is not one. */
export type LegacyRunStateReader = (parsed: unknown) => Record<string, unknown> | undefined;

export interface RunStateFormatOptions {
  /** The adapter's name in the envelope (`openai-agents`, `vercel-ai`, ...). */
  readonly adapter: string;
  /** The payload layout this build writes and reads (from 1); raise it when the layout changes. */
  readonly schemaVersion?: number;
  /** The framework's npm package, whose installed version the envelope records for diagnosis. */
  readonly framework?: string;
  readonly legacy?: LegacyRunStateReader;
}

const versions = new Map<string, string>();

/** `<package> <version>` of an installed package, the bare name when it cannot be found. */
export function frameworkVersion(pkg: string): string {
  let found = versions.get(pkg);
  if (found === undefined) {
    try {
      const manifest = createRequire(import.meta.url)(`${pkg}/package.json`) as { version?: unknown };
      found = typeof manifest.version === "string" ? `${pkg} ${manifest.version}` : pkg;
    } catch {
      found = pkg; // a package whose exports hide package.json
    }
    versions.set(pkg, found);
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** How one adapter writes and reads its run state. */
export class RunStateFormat {
  /**
   * The legacy reader of a pre-envelope layout that marked itself with
   * `field`: `value` (`"version": 1`, `"format": "<name>"`, as every adapter's
   * first layout did): such an object is the payload (Python's `RunStateFormat.marked`).
   */
  static marked(field: string, value: unknown): LegacyRunStateReader {
    return (parsed) => (isObject(parsed) && parsed[field] === value ? parsed : undefined);
  }

  readonly adapter: string;
  readonly schemaVersion: number;
  readonly #framework: string | undefined;
  readonly #legacy: LegacyRunStateReader | undefined;

  constructor(options: RunStateFormatOptions) {
    this.adapter = options.adapter;
    this.schemaVersion = options.schemaVersion ?? 1;
    this.#framework = options.framework;
    this.#legacy = options.legacy;
  }

  /** The envelope's wire JSON around `payload` (plain JSON data). */
  encode(payload: Record<string, unknown>): string {
    return encodeRunStateEnvelope(
      create(RunStateEnvelopeSchema, {
        adapter: this.adapter,
        frameworkVersion: this.#framework === undefined ? "" : frameworkVersion(this.#framework),
        schemaVersion: this.schemaVersion,
        payload: JSON.stringify(payload),
      }),
    );
  }

  /**
   * What `read` builds from the payload of `text`; a `TypeError` from `read`
   * (a field missing or of the wrong type) becomes a `RunStateError` too.
   *
   * @throws RunStateError not this adapter's state, a schema version this build does not read, or an unusable payload.
   */
  decode<T>(text: string, read: (payload: Record<string, unknown>) => T): T {
    const payload = this.#payload(text);
    try {
      return read(payload);
    } catch (error) {
      if (error instanceof TypeError) {
        throw new RunStateError(`unreadable ${this.adapter} run state (schema version ${this.schemaVersion}): ${error.message}`);
      }
      throw error;
    }
  }

  #payload(text: string): Record<string, unknown> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new RunStateError(`the ${this.adapter} run state is not JSON: ${String(error)}`);
    }
    if (!isObject(parsed) || typeof parsed["adapter"] !== "string" || parsed["adapter"] === "") return this.#legacyPayload(parsed, text);
    const envelope = decodeRunStateEnvelope(text);
    const written = `${envelope.frameworkVersion || "an unknown framework version"}`;
    if (envelope.adapter !== this.adapter) {
      throw new RunStateError(
        `the run state was not written by the ${this.adapter} adapter but by ${envelope.adapter} ` +
          `(schema version ${envelope.schemaVersion}, ${written}); this ${this.adapter} runner reads schema version ${this.schemaVersion}`,
      );
    }
    if (envelope.schemaVersion !== this.schemaVersion) {
      throw new RunStateError(
        `the ${this.adapter} run state has schema version ${envelope.schemaVersion} (written with ${written}), ` +
          `which this runner cannot read: it reads schema version ${this.schemaVersion}`,
      );
    }
    let payload: unknown;
    try {
      payload = JSON.parse(envelope.payload);
    } catch {
      throw new RunStateError(`the ${this.adapter} run state's payload is not JSON`);
    }
    if (!isObject(payload)) throw new RunStateError(`the ${this.adapter} run state's payload is not a JSON object`);
    return payload;
  }

  #legacyPayload(parsed: unknown, text: string): Record<string, unknown> {
    const payload = this.#legacy?.(parsed);
    if (payload === undefined) {
      throw new RunStateError(
        `the run state was not written by the ${this.adapter} adapter: it has no run state envelope nor an earlier ` +
          `${this.adapter} layout; this runner reads schema version ${this.schemaVersion}: ${JSON.stringify(text.slice(0, 120))}`,
      );
    }
    return payload;
  }
}
