/**
 * Support for the tests against a live `dex_agents.http` app (started by
 * python/core/tests/test_http_node.py): its address and sessions, a headless
 * `AbstractChat`, and a loopback proxy that cuts responses mid-body.
 *
 * @module
 */

import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";

export function liveEnv(): { baseUrl: string; sessions: string[]; gateDir: string } {
  const baseUrl = process.env["DEX_UI_BASE_URL"];
  const sessions = (process.env["DEX_UI_SESSIONS"] ?? "").split(",").filter((s) => s !== "");
  const gateDir = process.env["DEX_UI_GATE_DIR"];
  if (!baseUrl || sessions.length === 0 || !gateDir) {
    throw new Error("DEX_UI_BASE_URL, DEX_UI_SESSIONS and DEX_UI_GATE_DIR are unset: run these through test_http_node.py");
  }
  return { baseUrl, sessions, gateDir };
}

class MemoryState<M extends UIMessage> implements ChatState<M> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: M[] = [];
  pushMessage = (message: M): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: M): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** useChat's engine without React: the AI SDK's AbstractChat over an in-memory state. */
export class HeadlessChat<M extends UIMessage = UIMessage> extends AbstractChat<M> {
  constructor(init: Omit<ChatInit<M>, "messages">) {
    super({ ...init, state: new MemoryState<M>() });
  }
}

/** Waits for `check` to hold, polling; fails with `what` after `seconds`. */
export async function waitFor(check: () => boolean, what: string, seconds = 60): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** The value of a field (`id`, `data`) in one SSE block, or undefined without one. */
export function sseField(block: string, field: string): string | undefined {
  const line = block.split("\n").find((l) => l.startsWith(`${field}:`));
  return line?.slice(field.length + 1).replace(/^ /, "");
}

/**
 * A loopback HTTP proxy to `target`. A response `shouldCut` picks is forwarded
 * up to the end of its `afterEvents`-th event with an id (what a reader can
 * resume after; the `retry:` line and ping comments do not count); then the
 * upstream request is destroyed and the client's socket closed under the
 * unfinished chunked body, which Node's fetch reports as `TypeError: terminated`.
 * A response reaching a block `isTerminal` picks before its cut is passed on
 * whole: the reader has what it waits for, so a cut there would test nothing.
 */
export class CuttingProxy {
  readonly seen: SeenRequest[] = [];
  /** Per cut, in order, the id of the last event the cut response delivered. */
  readonly cutAfter: string[] = [];
  private server: Server | undefined;

  constructor(
    private readonly target: string,
    private readonly shouldCut: (request: SeenRequest, index: number) => boolean,
    private readonly afterEvents: number,
    private readonly isTerminal: (block: string) => boolean = () => false,
  ) {}

  get cuts(): number {
    return this.cutAfter.length;
  }

  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const seen = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
      const index = this.seen.push(seen) - 1;
      // "severed" drops whatever the upstream still emits after a cut: data already
      // buffered in the response can arrive after destroy(), and passing it on would
      // deliver the rest of the stream over the connection that was meant to be cut.
      let mode: "cutting" | "passing" | "severed" = this.shouldCut(seen, index) ? "cutting" : "passing";
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: seen.method, path: seen.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          let events = 0;
          let pending = "";
          answer.on("data", (data: Buffer) => {
            if (mode === "severed") return;
            if (mode === "passing") {
              res.write(data);
              return;
            }
            // Whole events only, so the cut falls right after the chosen one.
            pending += data.toString("latin1");
            let from = 0;
            while (mode === "cutting") {
              const end = pending.indexOf("\n\n", from);
              if (end < 0) break;
              const block = pending.slice(from, end);
              from = end + 2;
              if (this.isTerminal(block)) {
                mode = "passing";
                break;
              }
              const id = sseField(block, "id");
              if (id === undefined) continue;
              events += 1;
              if (events === this.afterEvents) {
                this.cutAfter.push(id);
                mode = "severed";
                answer.destroy();
                // Once the bytes are out, close the socket under the unfinished body.
                res.write(Buffer.from(pending.slice(0, from), "latin1"), () => res.socket?.end());
                pending = "";
                return;
              }
            }
            const ready = mode === "passing" ? pending.length : from;
            res.write(Buffer.from(pending.slice(0, ready), "latin1"));
            pending = pending.slice(ready);
          });
          answer.on("end", () => {
            if (mode !== "severed") res.end();
          });
        },
      );
      upstream.on("error", () => res.destroy());
      // A reader that stops reading ends its upstream too: an event stream would
      // otherwise stay open until the app's idle timeout and keep the process alive.
      res.on("close", () => upstream.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/**
 * A loopback HTTP proxy to `target` that, for the first request `shouldDrop`
 * picks, lets the upstream answer in full and then destroys the client's socket
 * without a byte of it: the server did the work, and the caller's fetch fails
 * as on a dropped connection. Every other request passes through.
 */
export class ReplyDroppingProxy {
  readonly seen: SeenRequest[] = [];
  drops = 0;
  private server: Server | undefined;

  constructor(
    private readonly target: string,
    private readonly shouldDrop: (request: SeenRequest) => boolean,
  ) {}

  async start(): Promise<string> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const seen = { method: req.method ?? "GET", url: req.url ?? "/", headers: req.headers };
      this.seen.push(seen);
      const drop = this.drops === 0 && this.shouldDrop(seen);
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: seen.method, path: seen.url, headers: req.headers },
        (answer) => {
          if (drop) {
            answer.resume();
            answer.on("end", () => {
              this.drops += 1;
              res.socket?.destroy();
            });
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
