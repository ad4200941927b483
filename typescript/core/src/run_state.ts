/**
 * The run-state envelope: every TypeScript runner's `frameworkRunState`,
 * versioned alike, as `dex_agents._runner.run_state` does it in Python.
 *
 * A runner declares its `RunStateFormat` once (its name, its payload's schema
 * version, the framework it wraps) and hands it plain JSON data; the envelope
 * (`RunStateEnvelope` in runner.proto, read and written by the generated codec)
 * says who wrote the payload and in which layout, so a state another adapter
 * wrote, or a layout this build cannot read, fails with one `RunStateError`
 * that names both adapters and both schema versions instead of being misread.
 * A state written before the envelope goes through the format's `legacy` reader.
 *
 * @module
 */

import { create, type JsonValue } from "@bufbuild/protobuf";
import { decodeRunStateEnvelope, encodeRunStateEnvelope, RunStateEnvelopeSchema, WireFormatError } from "@dex-agents/contracts";

/** A run state or stored item this runner cannot read; retrying would fail the same way. */
export class RunStateError extends Error {
  override name = "RunStateError";
}

/** A pre-envelope state's parsed JSON to today's payload; undefined when it is not one. */
export type LegacyRunStateReader = (state: JsonValue) => { readonly [key: string]: JsonValue } | undefined;

export interface RunStateFormatOptions {
  /** The adapter's name in the envelope (`mastra`, `stepwise`, ...). */
  readonly adapter: string;
  /** The payload layout this build writes and reads (default 1); raise it when the layout changes. */
  readonly schemaVersion?: number;
  /** The framework and its version (`@mastra/core 0.20.0`), recorded for diagnosis only. */
  readonly frameworkVersion?: string;
  readonly legacy?: LegacyRunStateReader;
}

/** How one adapter writes and reads its run state. */
export class RunStateFormat {
  readonly adapter: string;
  readonly schemaVersion: number;
  readonly frameworkVersion: string;
  private readonly legacy: LegacyRunStateReader | undefined;

  constructor(options: RunStateFormatOptions) {
    this.adapter = options.adapter;
    this.schemaVersion = options.schemaVersion ?? 1;
    this.frameworkVersion = options.frameworkVersion ?? "";
    this.legacy = options.legacy;
  }

  /** The envelope's wire JSON around `payload` (plain JSON data). */
  encode(payload: JsonValue): string {
    return encodeRunStateEnvelope(
      create(RunStateEnvelopeSchema, {
        adapter: this.adapter,
        frameworkVersion: this.frameworkVersion,
        schemaVersion: this.schemaVersion,
        payload: JSON.stringify(payload),
      }),
    );
  }

  /**
   * The state `read` builds from the payload of `text`. An error `read` throws
   * (a payload without what it needs) becomes a `RunStateError` too.
   *
   * @throws {RunStateError} Not this adapter's state, a schema version this build
   *   does not read, or a payload `read` cannot use.
   */
  decode<T>(text: string, read: (payload: { readonly [key: string]: JsonValue }) => T): T {
    const payload = this.payload(text);
    try {
      return read(payload);
    } catch (error) {
      if (error instanceof RunStateError) throw error;
      throw new RunStateError(`unreadable ${this.adapter} run state (schema version ${this.schemaVersion}): ${String(error)}`);
    }
  }

  private payload(text: string): { readonly [key: string]: JsonValue } {
    let envelope;
    try {
      envelope = decodeRunStateEnvelope(text);
    } catch (error) {
      if (!(error instanceof WireFormatError)) throw error;
      throw new RunStateError(`the run state is not a run state envelope: ${error.message}`);
    }
    if (envelope.adapter === "") return this.legacyPayload(text);
    const written = envelope.frameworkVersion || "framework version unknown";
    if (envelope.adapter !== this.adapter) {
      throw new RunStateError(
        `the run state was not written by the ${this.adapter} adapter but by ${envelope.adapter} ` +
          `(schema version ${envelope.schemaVersion}, ${written}); this ${this.adapter} runner reads ` +
          `schema version ${this.schemaVersion}`,
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
    if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
      throw new RunStateError(`the ${this.adapter} run state's payload is not a JSON object`);
    }
    return payload as { readonly [key: string]: JsonValue };
  }

  private legacyPayload(text: string): { readonly [key: string]: JsonValue } {
    const payload = this.legacy?.(JSON.parse(text) as JsonValue);
    if (payload === undefined) {
      throw new RunStateError(
        `the run state was not written by the ${this.adapter} adapter: it has no run state envelope nor an ` +
          `earlier ${this.adapter} layout; this runner reads schema version ${this.schemaVersion}: ${text.slice(0, 120)}`,
      );
    }
    return payload;
  }
}
