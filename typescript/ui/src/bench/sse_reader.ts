/**
 * The browser-side reader of python/core/bench/http_sse.py, in Node: it parses
 * what a page would, with this package's own clients, and prints one JSON line
 * per item with the wall-clock time it was parsed (ms since the epoch,
 * fractional), for the bench to set against each event's commit time.
 *
 *     node dist/bench/sse_reader.js events BASE SESSION
 *         streamAgentEvents from the oldest event to the first turn_completed:
 *         {"token", "at"} per AgentEvent (decoded by @dex-agents/contracts)
 *     node dist/bench/sse_reader.js ui BASE SESSION TEXT
 *         POSTs TEXT to the UI message stream as useChat does and reads the turn:
 *         {"token", "at"} per chunk (SSE read by readSse, each chunk checked by
 *         ai's uiMessageChunkSchema, as ai's parseJsonEventStream does)
 *     node dist/bench/sse_reader.js ui-replay BASE SESSION TURN
 *         the same for GET ?turn=TURN (a finished turn, replayed)
 *
 * It prints {"connected": true} once the response headers are in, and
 * {"count", "seconds"} (from then to the last item) at the end.
 *
 * @module
 */

import { asSchema, uiMessageChunkSchema } from "ai";

import { streamAgentEvents } from "../events.js";
import { sessionUrl } from "../http.js";
import { readSse } from "../sse.js";

const now = (): number => performance.timeOrigin + performance.now();
const print = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

async function readEvents(base: string, session: string): Promise<[number, number]> {
  let connected = 0;
  const fetchAndSay: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (connected === 0) {
      connected = now();
      print({ connected: true });
    }
    return response;
  };
  let count = 0;
  let last = 0;
  for await (const { event, resumeToken } of streamAgentEvents(base, session, { fetch: fetchAndSay })) {
    last = now();
    count += 1;
    print({ token: resumeToken, at: last });
    if (event.type === "turn_completed") break;
  }
  return [count, (last - connected) / 1000];
}

async function readUi(response: Response): Promise<[number, number]> {
  if (!response.ok || response.body === null) {
    throw new Error(`the UI stream answered ${response.status}: ${await response.text()}`);
  }
  const connected = now();
  print({ connected: true });
  const schema = asSchema(uiMessageChunkSchema);
  let count = 0;
  let last = connected;
  for await (const message of readSse(response.body)) {
    if (message.data === "[DONE]") break;
    const checked = await schema.validate!(JSON.parse(message.data));
    if (!checked.success) throw checked.error;
    last = now();
    count += 1;
    print({ token: message.id, at: last });
  }
  return [count, (last - connected) / 1000];
}

async function main(argv: readonly string[]): Promise<void> {
  const [mode, base, session, argument] = argv;
  if (base === undefined || session === undefined) {
    throw new Error("usage: sse_reader.js events|ui|ui-replay BASE SESSION [TEXT|TURN]");
  }
  let result: [number, number];
  if (mode === "events") {
    result = await readEvents(base, session);
  } else if (mode === "ui" && argument !== undefined) {
    const body = {
      id: session,
      trigger: "submit-message",
      messages: [{ id: "bench-user", role: "user", parts: [{ type: "text", text: argument }] }],
    };
    const response = await fetch(sessionUrl(base, session, "ui-stream"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    result = await readUi(response);
  } else if (mode === "ui-replay" && argument !== undefined) {
    result = await readUi(await fetch(`${sessionUrl(base, session, "ui-stream")}?turn=${encodeURIComponent(argument)}`));
  } else {
    throw new Error(`unknown mode ${JSON.stringify(mode)} or a missing argument`);
  }
  print({ count: result[0], seconds: result[1] });
}

await main(process.argv.slice(2));
