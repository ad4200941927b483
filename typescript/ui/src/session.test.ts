/** DexSessionClient against a stand-in fetch: bodies, client request IDs, retries and refusals. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { DexHttpError } from "./http.js";
import { DexRequestUnansweredError, DexSessionClient } from "./session.js";

interface Sent {
  readonly url: string;
  readonly body: Record<string, unknown>;
}

/** A fetch that plays `steps` in order: a Response, or an error to throw as fetch does. */
function scripted(steps: (Response | Error)[]): { fetch: typeof globalThis.fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    sent.push({ url: String(input), body: JSON.parse(String(init?.body)) as Record<string, unknown> });
    const step = steps.shift();
    if (step === undefined) throw new Error("no more scripted answers");
    if (step instanceof Error) throw step;
    return step;
  };
  return { fetch, sent };
}

const answer = (result: boolean): Response => Response.json({ result });
const refused = (status: number, error: string): Response => Response.json({ error }, { status });

function client(fetch: typeof globalThis.fetch, maxAttempts = 5): DexSessionClient {
  return new DexSessionClient({ api: "http://app/", fetch, maxAttempts, retryDelayMs: 1 });
}

test("each call posts its fields and a fresh client request ID", async () => {
  const { fetch, sent } = scripted([answer(true), answer(false), answer(true)]);
  const sessions = client(fetch);
  assert.equal(await sessions.sendUserMessage("s 1", "hi", { planMode: true }), true);
  assert.equal(await sessions.resolveInterrupt("s 1", "w1", { approved: false, rejectionMessage: "no" }), false);
  assert.equal(await sessions.cancelTurn("s 1"), true);
  assert.deepEqual(
    sent.map((s) => s.url),
    ["http://app/sessions/s%201/send", "http://app/sessions/s%201/resolve", "http://app/sessions/s%201/cancel"],
  );
  const [send, resolve, cancel] = sent.map((s) => s.body);
  assert.deepEqual({ ...send, client_request_id: "x" }, { text: "hi", plan_mode: true, client_request_id: "x" });
  assert.deepEqual({ ...resolve, client_request_id: "x" }, {
    interrupt_id: "w1",
    approved: false,
    rejection_message: "no",
    client_request_id: "x",
  });
  assert.deepEqual({ ...cancel, client_request_id: "x" }, { turn_id: null, client_request_id: "x" });
  const ids = sent.map((s) => s.body["client_request_id"]);
  assert.equal(new Set(ids).size, 3);
  for (const id of ids) assert.match(String(id), /^[0-9a-f-]{36}$/);
});

test("a dropped connection and a 503 are retried with the same client request ID", async () => {
  const { fetch, sent } = scripted([new TypeError("fetch failed"), refused(503, "no Worker answered"), answer(true)]);
  assert.equal(await client(fetch).answerQuestion("s", "q1", "aisle"), true);
  assert.equal(sent.length, 3);
  assert.equal(new Set(sent.map((s) => s.body["client_request_id"])).size, 1);
});

test("the caller's client request ID is sent on every attempt", async () => {
  const { fetch, sent } = scripted([new TypeError("terminated"), answer(true)]);
  const ok = await client(fetch).steerUserMessage("s", { messageId: "m-1" }, { clientRequestId: "steer-1" });
  assert.equal(ok, true);
  assert.deepEqual(
    sent.map((s) => s.body),
    [
      { message_id: "m-1", client_request_id: "steer-1" },
      { message_id: "m-1", client_request_id: "steer-1" },
    ],
  );
});

test("a refusal is thrown at once, naming the server's reason", async () => {
  const { fetch, sent } = scripted([refused(409, "client request ID 'r' already answered a different request")]);
  await assert.rejects(
    client(fetch).updateSessionSettings("s", { model: "m" }, { clientRequestId: "r" }),
    (error: unknown) =>
      error instanceof DexHttpError &&
      error.status === 409 &&
      error.message === "POST settings of s answered 409: client request ID 'r' already answered a different request",
  );
  assert.equal(sent.length, 1);
});

test("attempts are bounded, and the error keeps the ID to repeat the call with", async () => {
  const { fetch, sent } = scripted([new TypeError("fetch failed"), refused(504, "gateway"), new TypeError("fetch failed")]);
  await assert.rejects(
    client(fetch, 3).sendUserMessage("s", "hi", { clientRequestId: "send-1" }),
    (error: unknown) =>
      error instanceof DexRequestUnansweredError &&
      error.clientRequestId === "send-1" &&
      error.attempts === 3 &&
      error.cause instanceof TypeError,
  );
  assert.equal(sent.length, 3);
});

test("a malformed client request ID is refused before sending", async () => {
  const { fetch, sent } = scripted([]);
  await assert.rejects(client(fetch).cancelTurn("s", { clientRequestId: "a/b" }), /client request ID "a\/b" must be 1 to 128/);
  assert.equal(sent.length, 0);
});

test("an aborted call stops retrying", async () => {
  const controller = new AbortController();
  const fetch = async (): Promise<Response> => {
    controller.abort(new Error("page closed"));
    throw new TypeError("fetch failed");
  };
  await assert.rejects(client(fetch).sendUserMessage("s", "hi", { signal: controller.signal }), /page closed/);
});
