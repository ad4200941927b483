/**
 * A scripted Anthropic Messages API on loopback: the Claude Code CLI makes its
 * own HTTP model calls, so no in-process fake model can stand in for it. Point
 * the CLI at `baseUrl` (`offlineEnv`) and every `POST /v1/messages` is
 * answered by `respond` from the request body, streamed as the real API
 * streams (message_start, content blocks with text and input-JSON deltas,
 * message_delta with the stop reason and usage, message_stop). The same
 * shape as `dex_agents_testing.fake_anthropic`, in TypeScript so node tests
 * and the conformance sidecar can script it in-process.
 *
 * @module
 */

import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: Record<string, unknown> };

/** One model response, or an API error when `errorStatus` is set. */
export interface ScriptedReply {
  readonly blocks: readonly ScriptedBlock[];
  readonly errorStatus?: number;
  readonly errorMessage?: string;
}

export function textReply(text: string): ScriptedReply {
  return { blocks: [{ type: "text", text }] };
}

export function toolUseReply(...calls: readonly [string, string, Record<string, unknown>][]): ScriptedReply {
  return { blocks: calls.map(([id, name, input]) => ({ type: "tool_use", id, name, input })) };
}

type Block = Record<string, unknown>;
type Message = { readonly role?: unknown; readonly content?: unknown };

function blocks(content: unknown): Block[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b): b is Block => typeof b === "object" && b !== null) : [];
}

function resultText(block: Block): string {
  const content = block["content"];
  if (typeof content === "string") return content;
  return blocks(content)
    .map((b) => (b["type"] === "text" ? String(b["text"] ?? "") : ""))
    .join("");
}

/** A `POST /v1/messages` body, with the views a scripted model answers from. */
export class MessagesRequest {
  constructor(readonly body: Record<string, unknown>) {}

  get messages(): Message[] {
    const messages = this.body["messages"];
    return Array.isArray(messages) ? (messages as Message[]) : [];
  }

  /** Text blocks users sent, oldest first (tool results and system reminders left out). */
  userTexts(messages: readonly Message[] = this.messages): string[] {
    return messages
      .filter((m) => m.role === "user")
      .flatMap((m) => blocks(m.content))
      .flatMap((b) =>
        b["type"] === "text" && typeof b["text"] === "string" && !b["text"].startsWith("<system-reminder>")
          ? [b["text"]]
          : [],
      );
  }

  /** Every `[id, name, input]` the assistant asked for, oldest first. */
  toolUses(): [string, string, unknown][] {
    return this.messages
      .filter((m) => m.role === "assistant")
      .flatMap((m) => blocks(m.content))
      .flatMap((b) => (b["type"] === "tool_use" ? [[String(b["id"]), String(b["name"]), b["input"]] as [string, string, unknown]] : []));
  }

  /** Every `[toolUseId, text, isError]` sent back, oldest first (or of `messages`). */
  toolResults(messages: readonly Message[] = this.messages): [string, string, boolean][] {
    return messages
      .filter((m) => m.role === "user")
      .flatMap((m) => blocks(m.content))
      .flatMap((b) =>
        b["type"] === "tool_result" ? [[String(b["tool_use_id"]), resultText(b), b["is_error"] === true] as [string, string, boolean]] : [],
      );
  }

  /** The tool results after the model's last response (none when the user spoke last). */
  newResults(): [string, string, boolean][] {
    const messages = this.messages;
    const last = messages.findLastIndex((m) => m.role === "assistant");
    return this.toolResults(messages.slice(last + 1));
  }
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function message(model: string, reply: ScriptedReply): Record<string, unknown> {
  const toolUse = reply.blocks.some((b) => b.type === "tool_use");
  return {
    id: `msg_${randomUUID().replaceAll("-", "").slice(0, 24)}`,
    type: "message",
    role: "assistant",
    model,
    content: reply.blocks,
    stop_reason: toolUse ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
}

function stream(model: string, reply: ScriptedReply): string {
  const whole = message(model, reply);
  const out = [
    sse("message_start", { type: "message_start", message: { ...whole, content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } }),
  ];
  reply.blocks.forEach((block, index) => {
    const [opening, delta] =
      block.type === "text"
        ? [{ type: "text", text: "" }, { type: "text_delta", text: block.text }]
        : [
            { type: "tool_use", id: block.id, name: block.name, input: {} },
            { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
          ];
    out.push(sse("content_block_start", { type: "content_block_start", index, content_block: opening }));
    out.push(sse("content_block_delta", { type: "content_block_delta", index, delta }));
    out.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });
  out.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: whole["stop_reason"], stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
  );
  out.push(sse("message_stop", { type: "message_stop" }));
  return out.join("");
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The scripted API on 127.0.0.1; `respond` may wait (a test gate). */
export class FakeMessagesServer {
  readonly requests: MessagesRequest[] = [];
  /** Requests for anything but the messages API (answered 404). */
  readonly otherPaths: string[] = [];
  readonly #server: Server;

  private constructor(respond: (request: MessagesRequest) => ScriptedReply | Promise<ScriptedReply>) {
    this.#server = createServer((req, res) => void this.#handle(req, res, respond));
  }

  static async start(respond: (request: MessagesRequest) => ScriptedReply | Promise<ScriptedReply>): Promise<FakeMessagesServer> {
    const fake = new FakeMessagesServer(respond);
    await new Promise<void>((resolve) => fake.#server.listen(0, "127.0.0.1", resolve));
    return fake;
  }

  get baseUrl(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `http://${address}:${port}`;
  }

  async #handle(
    req: IncomingMessage,
    res: ServerResponse,
    respond: (request: MessagesRequest) => ScriptedReply | Promise<ScriptedReply>,
  ): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? "").split("?")[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { "content-type": type, "request-id": `req_${randomUUID().slice(0, 8)}` });
      res.end(body);
    };
    if (req.method === "POST" && path === "/v1/messages/count_tokens") return send(200, "application/json", '{"input_tokens": 10}');
    if (req.method !== "POST" || path !== "/v1/messages") {
      this.otherPaths.push(`${req.method} ${req.url}`);
      return send(404, "application/json", JSON.stringify({ type: "error", error: { type: "not_found_error", message: "no" } }));
    }
    const body = JSON.parse(raw || "{}") as Record<string, unknown>;
    const request = new MessagesRequest(body);
    this.requests.push(request);
    let reply: ScriptedReply;
    try {
      reply = await respond(request);
    } catch (error) {
      reply = { blocks: [], errorStatus: 500, errorMessage: String(error) };
    }
    const model = String(body["model"] ?? "");
    if (reply.errorStatus !== undefined) {
      return send(reply.errorStatus, "application/json", JSON.stringify({ type: "error", error: { type: "api_error", message: reply.errorMessage ?? "scripted error" } }));
    }
    if (body["stream"] === true) return send(200, "text/event-stream", stream(model, reply));
    return send(200, "application/json", JSON.stringify(message(model, reply)));
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** What the CLI needs to call only `baseUrl`: a placeholder key, no telemetry,
 * update checks or other traffic, and no API retries of its own (the RunModel
 * Step's retry policy decides). */
export function offlineEnv(baseUrl: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "sk-fake-for-loopback",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
  };
}
