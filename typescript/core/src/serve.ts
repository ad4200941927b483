/**
 * `serveRunners`: the runner service (runner.proto) on @grpc/grpc-js, so the
 * Python Worker's `RemoteRunner` reaches TypeScript runners.
 *
 * Messages travel as their wire JSON (the contracts' codecs), the same bytes
 * the golden vectors pin. A streamed call sends event and heartbeat frames
 * and ends with one outcome frame; a runner that throws answers a `failure`
 * frame (its class name and message), and a `ToolExecutionError` the
 * model-visible `tool_error`. Cancelling the call (the Step was cancelled,
 * or its deadline passed) aborts the runner's `cancellationSignal`.
 *
 * @module
 */

import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  AgentFrameworkRunnerService,
  codecs,
  encodeAgentEventPayload,
  RunnerEventSchema,
  RunnerFailureSchema,
  RunnerHeartbeatSchema,
  type RunnerFailure,
  type RunnerSessionOptions,
} from "@dex-agents/contracts";
import * as grpc from "@grpc/grpc-js";
import type { AgentFrameworkRunner, DeferredToolOutcome, EventWriter } from "./runner.js";
import { handlers, type Handler, type StreamFrames } from "./handlers.js";
import { wireSessionOptions, type SessionOptions } from "./session_options.js";

/** How often a streamed call beats on its own, well inside Dex's two minutes. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;

export interface ServeRunnersOptions {
  /** The runners by the Flow type each is served under. */
  readonly runners: Readonly<Record<string, AgentFrameworkRunner<DeferredToolOutcome>>>;
  /** `host:port` to listen on; port 0 picks a free one. Default `127.0.0.1:0`. */
  readonly address?: string;
  readonly heartbeatIntervalMs?: number;
  /** Per Flow type of `runners`: the session options its Python Worker runs the Flow with. */
  readonly sessionOptions?: Readonly<Record<string, SessionOptions>>;
}

/** What the service serves: the runners and their session options in wire form. */
interface Served {
  readonly runners: ServeRunnersOptions["runners"];
  readonly sessionOptions: ReadonlyMap<string, RunnerSessionOptions>;
}

export interface RunnerServer {
  /** `host:port` the service listens on. */
  readonly address: string;
  /** Stops accepting calls and waits for running ones. */
  close(): Promise<void>;
}

/** Starts the runner service; resolves once it listens. */
export async function serveRunners(options: ServeRunnersOptions): Promise<RunnerServer> {
  const flowTypes = Object.keys(options.runners);
  if (flowTypes.length === 0) {
    throw new RangeError("serveRunners needs at least one runner in `runners`");
  }
  for (const flowType of flowTypes) {
    if (flowType === "" || flowType.includes("/")) {
      throw new RangeError(`flow type ${JSON.stringify(flowType)} must be a non-empty name without '/'`);
    }
  }
  const sessionOptions = new Map<string, RunnerSessionOptions>();
  for (const [flowType, flowOptions] of Object.entries(options.sessionOptions ?? {})) {
    if (!flowTypes.includes(flowType)) {
      throw new RangeError(`sessionOptions names flow type ${JSON.stringify(flowType)}, which serves no runner`);
    }
    sessionOptions.set(flowType, wireSessionOptions(flowOptions));
  }
  const served: Served = { runners: options.runners, sessionOptions };
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const server = new grpc.Server({
    "grpc.max_receive_message_length": 64 * 1024 * 1024,
    "grpc.max_send_message_length": 64 * 1024 * 1024,
  });
  const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of AgentFrameworkRunnerService.methods) {
    const input = codecFor(method.input);
    const output = codecFor(method.output);
    const streaming = method.methodKind === "server_streaming";
    definition[method.localName] = {
      path: `/${AgentFrameworkRunnerService.typeName}/${method.name}`,
      requestStream: false,
      responseStream: streaming,
      requestSerialize: (value: unknown) => Buffer.from(input.encode(value)),
      requestDeserialize: (bytes: Buffer) => input.decode(bytes),
      responseSerialize: (value: unknown) => Buffer.from(output.encode(value)),
      responseDeserialize: (bytes: Buffer) => output.decode(bytes),
      originalName: method.localName,
    };
    const handler = handlers[method.name];
    if (handler === undefined) {
      throw new Error(`no handler for runner service method ${method.name}`);
    }
    implementation[method.localName] = streaming
      ? streamingHandler(handler, method.output, served, heartbeatIntervalMs)
      : unaryHandler(handler, method.output, served);
  }
  server.addService(definition as grpc.ServiceDefinition, implementation);
  const address = options.address ?? "127.0.0.1:0";
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  const host = address.slice(0, address.lastIndexOf(":"));
  return {
    address: `${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => resolve());
      }),
  };
}

/** A codec of the registry, typed loosely: the method descriptor picks it by name. */
interface WireCodec {
  encode(value: unknown): string;
  decode(text: string | Uint8Array): unknown;
}

function codecFor(message: DescMessage): WireCodec {
  const codec = (codecs as unknown as Record<string, WireCodec | undefined>)[message.name];
  if (codec === undefined) throw new Error(`no wire codec for ${message.typeName}`);
  return codec;
}

/** The wire form of anything a runner threw. */
export function failureOf(error: unknown): RunnerFailure {
  if (error instanceof Error) {
    return create(RunnerFailureSchema, { errorType: error.name, message: error.message });
  }
  return create(RunnerFailureSchema, { errorType: typeof error, message: String(error) });
}

function unaryHandler(
  handler: Handler,
  output: DescMessage,
  served: Served,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const controller = new AbortController();
    call.on("cancelled", () => controller.abort(new Error("the runner call was cancelled")));
    const frames = noStreamFrames(controller.signal);
    run(handler, call.request as never, served, frames).then(
      (response) => callback(null, response),
      (error: unknown) => callback(null, create(output, { failure: failureOf(error) } as never)),
    );
  };
}

function streamingHandler(
  handler: Handler,
  output: DescMessage,
  served: Served,
  heartbeatIntervalMs: number,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const controller = new AbortController();
    let open = true;
    call.on("cancelled", () => {
      open = false;
      controller.abort(new Error("the runner call was cancelled"));
    });
    const send = (init: Record<string, unknown>): void => {
      if (open && !call.cancelled) call.write(create(output, init as never));
    };
    const hasEvents = output.fields.some((f) => f.name === "event");
    const frames: StreamFrames = {
      signal: controller.signal,
      events: eventWriter(hasEvents ? send : undefined),
      heartbeat: async () => send({ heartbeat: create(RunnerHeartbeatSchema, {}) }),
      saveCheckpoint: async (checkpoint) =>
        send({ heartbeat: create(RunnerHeartbeatSchema, { checkpoint }) }),
    };
    const timer = setInterval(() => void frames.heartbeat(), heartbeatIntervalMs);
    run(handler, call.request as never, served, frames)
      .then(
        (outcome) => {
          if (open && !call.cancelled) call.write(outcome);
        },
        (error: unknown) => send({ failure: failureOf(error) }),
      )
      .finally(() => {
        clearInterval(timer);
        open = false;
        if (!call.cancelled) call.end();
      });
  };
}

async function run(
  handler: Handler,
  request: never,
  served: Served,
  frames: StreamFrames,
): Promise<MessageShape<DescMessage>> {
  const flowType = (request as { flowType: string }).flowType;
  const runner = served.runners[flowType];
  if (runner === undefined) {
    throw new UnknownFlowTypeError(flowType, Object.keys(served.runners));
  }
  return handler(runner, request, frames, served.sessionOptions.get(flowType));
}

/** No runner is served under the requested Flow type. */
export class UnknownFlowTypeError extends Error {
  override name = "UnknownFlowTypeError";
  readonly flowType: string;

  constructor(flowType: string, served: readonly string[]) {
    super(`no runner is served for flow type ${JSON.stringify(flowType)}; served: ${served.join(", ")}`);
    this.flowType = flowType;
  }
}

function noStreamFrames(signal: AbortSignal): StreamFrames {
  return {
    signal,
    events: eventWriter(undefined),
    heartbeat: async () => {},
    saveCheckpoint: async () => {
      throw new Error("a unary runner call cannot save a heartbeat checkpoint");
    },
  };
}

function eventWriter(send: ((init: Record<string, unknown>) => void) | undefined): EventWriter {
  const writeRaw = (eventType: string, payloadJson: string): void => {
    if (eventType === "") throw new RangeError("an event needs a type");
    const parsed: unknown = JSON.parse(payloadJson);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
      throw new RangeError("an event payload must be a JSON object");
    }
    send?.({ event: create(RunnerEventSchema, { eventType, payload: payloadJson }) });
  };
  return {
    write: (event) => {
      const { type, payload } = encodeAgentEventPayload(event);
      writeRaw(type, payload);
    },
    writeRaw,
  };
}
