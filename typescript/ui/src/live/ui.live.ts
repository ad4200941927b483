/**
 * @dex-agents/ui against the real path: dexlite, a Worker process with a
 * scripted model and the dex_agents.http app on uvicorn, started by
 * python/core/tests/test_http_node.py (model commands: python/core/tests/http_flows.py).
 * The tests run in order; each uses its own session.
 */

import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai";

import { streamAgentEvents, fetchUiSnapshot } from "../events.js";
import { convertAgentSnapshotToUIMessages } from "../messages.js";
import { foldChunks, parsedChunks, plain } from "../testing.js";
import { DexSessionClient } from "../session.js";
import { DexChatTransport } from "../transport.js";
import { CuttingProxy, HeadlessChat, liveEnv, ReplyDroppingProxy, sseField, waitFor } from "./support.js";

const { baseUrl, sessions, gateDir } = liveEnv();

function userBody(text: string): string {
  return JSON.stringify({
    id: "chat",
    trigger: "submit-message",
    messages: [{ id: `u-${text}`, role: "user", parts: [{ type: "text", text }] }],
  });
}

async function postTurn(session: string, text: string): Promise<UIMessage> {
  const response = await fetch(`${baseUrl}/sessions/${session}/ui-stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: userBody(text),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
  return foldChunks<UIMessage>(await parsedChunks(response.body!));
}

async function converted(session: string): Promise<UIMessage[]> {
  const { snapshot, steeredTurns } = await fetchUiSnapshot(baseUrl, session);
  return convertAgentSnapshotToUIMessages(snapshot, { steeredTurns });
}

function assistant(messages: UIMessage[], id: string): UIMessage {
  const found = messages.find((m) => m.id === id);
  assert.ok(found, `no message ${id} in ${JSON.stringify(messages.map((m) => m.id))}`);
  return found;
}

test("ai's own parser reads our stream into the UIMessages the snapshot converts to", async () => {
  const session = sessions[0]!;
  const toolTurn = await postTurn(session, "tool:1");
  const sayTurn = await postTurn(session, "say hello there");
  const fromSnapshot = await converted(session);
  assert.deepEqual(
    fromSnapshot.map((m) => m.role),
    ["user", "assistant", "user", "assistant"],
  );
  assert.deepEqual(plain(assistant(fromSnapshot, toolTurn.id)), plain(toolTurn));
  assert.deepEqual(plain(assistant(fromSnapshot, sayTurn.id)), plain(sayTurn));
  // The tool turn: a model call with the tool part, then a model call with the answer.
  const kinds = toolTurn.parts.map((p) => p.type);
  assert.deepEqual(kinds, ["step-start", "dynamic-tool", "step-start", "text"]);
  const tool = toolTurn.parts[1]!;
  assert.ok(tool.type === "dynamic-tool" && tool.state === "output-available");
  assert.deepEqual(tool.input, { q: "x" });
  assert.equal(tool.output, "found x");
  const text = sayTurn.parts.find((p) => p.type === "text");
  assert.ok(text && text.type === "text" && text.text === "ok hello there");
});

test("DexChatTransport in useChat's engine survives a connection cut mid-turn", async () => {
  const session = sessions[1]!;
  const proxy = new CuttingProxy(baseUrl, (r) => r.method === "POST", 3);
  const api = await proxy.start();
  try {
    const reasons: unknown[] = [];
    const transport = new DexChatTransport({ api, onReconnect: (_, reason) => reasons.push(reason) });
    const chat = new HeadlessChat({ id: session, transport });
    await chat.sendMessage({ text: "tool:2" });
    await waitFor(() => chat.status === "ready" || chat.status === "error", "the chat to settle");
    assert.equal(chat.error, undefined);
    assert.equal(chat.status, "ready");
    assert.equal(proxy.cuts, 1);
    // Node's fetch reports the cut body as `TypeError: terminated`, which useChat would not retry.
    assert.equal(reasons.length, 1);
    assert.ok(reasons[0] instanceof TypeError && reasons[0].message === "terminated", String(reasons[0]));
    const resumed = proxy.seen.filter((r) => r.method === "GET");
    assert.ok(resumed.length >= 1, "the transport reconnected");
    assert.match(String(resumed[0]!.headers["last-event-id"]), /^u1\./);
    assert.match(resumed[0]!.url, /\/ui-stream\?exact=1$/);
    const streamed = chat.messages.at(-1)!;
    assert.equal(streamed.role, "assistant");
    assert.deepEqual(plain(assistant(await converted(session), streamed.id)), plain(streamed));
  } finally {
    await proxy.stop();
  }
});

test("an approval through useChat: approval-requested, then addToolApprovalResponse runs the tool", async () => {
  const session = sessions[2]!;
  const chat = new HeadlessChat({
    id: session,
    transport: new DexChatTransport({ api: baseUrl }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  await chat.sendMessage({ text: "approve:3" });
  await waitFor(() => chat.status === "ready" || chat.status === "error", "the approval request");
  assert.equal(chat.error, undefined);
  const asked = chat.messages.at(-1)!.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(asked && asked.type === "dynamic-tool" && asked.state === "approval-requested");
  const fromSnapshot = assistant(await converted(session), chat.messages.at(-1)!.id);
  assert.deepEqual(plain(fromSnapshot), plain(chat.messages.at(-1)!));
  await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
  const finished = (): boolean => {
    const last = chat.messages.at(-1)!;
    return chat.status === "error" || (chat.status === "ready" && last.parts.some((p) => p.type === "text"));
  };
  await waitFor(finished, "the approved turn to finish");
  assert.equal(chat.error, undefined);
  const done = chat.messages.at(-1)!;
  const tool = done.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(tool && tool.type === "dynamic-tool" && tool.state === "output-available");
  assert.equal(tool.output, "deployed to prod");
  assert.equal(tool.approval?.approved, true);
  const text = done.parts.findLast((p) => p.type === "text");
  assert.ok(text && text.type === "text" && text.text === "deployed");
});

test("a reloaded page (resumeStream) replays the active turn into the same message", async () => {
  const session = sessions[4]!;
  const first = new HeadlessChat({ id: session, transport: new DexChatTransport({ api: baseUrl }) });
  await first.sendMessage({ text: "approve:5" });
  assert.equal(first.error, undefined);
  const asked = first.messages.at(-1)!;
  // A new chat instance with no messages, as after a reload; the turn waits for the approval.
  const reloaded = new HeadlessChat({ id: session, transport: new DexChatTransport({ api: baseUrl }) });
  await reloaded.resumeStream();
  assert.equal(reloaded.error, undefined);
  assert.equal(reloaded.status, "ready");
  assert.deepEqual(plain(reloaded.messages.at(-1)!), plain(asked));
  const tool = asked.parts.find((p) => p.type === "dynamic-tool");
  assert.ok(tool && tool.type === "dynamic-tool" && tool.state === "approval-requested");
});

test("streamAgentEvents resumes cut connections by Last-Event-ID with no gap or duplicate", async () => {
  const session = sessions[3]!;
  await postTurn(session, "tool:4");
  const read = async (api: string): Promise<{ seen: string[]; tokens: string[] }> => {
    const seen: string[] = [];
    const tokens: string[] = [];
    for await (const { event, resumeToken } of streamAgentEvents(api, session)) {
      seen.push(`${resumeToken} ${event.type}`);
      tokens.push(resumeToken);
      if (event.type === "turn_completed") break;
    }
    return { seen, tokens };
  };
  const direct = await read(baseUrl);
  assert.ok(direct.seen.length > 6, direct.seen.join("\n"));
  // Every connection is cut after its fourth event, unless it delivers
  // turn_completed first: once the reader has that it stops, so a cut after it
  // would need no resume and prove nothing.
  const perConnection = 4;
  const completes = (block: string): boolean => {
    const data = sseField(block, "data");
    return data !== undefined && (JSON.parse(data) as { type?: unknown }).type === "turn_completed";
  };
  const proxy = new CuttingProxy(baseUrl, () => true, perConnection, completes);
  const api = await proxy.start();
  try {
    assert.deepEqual((await read(api)).seen, direct.seen);
    // The replayed turn falls into connections of `perConnection` events, the
    // last one ending with turn_completed; each cut one is resumed once, from the
    // token of the last event it delivered.
    const last = direct.tokens.length - 1;
    const expected = direct.tokens.filter((_, i) => i < last && (i + 1) % perConnection === 0);
    assert.ok(expected.length >= 1, `${direct.tokens.length} events make no cut`);
    assert.deepEqual(proxy.cutAfter, expected);
    const resumes = proxy.seen.slice(1).map((r) => r.headers["last-event-id"]);
    assert.deepEqual(resumes, expected);
    assert.equal(proxy.seen[0]!.headers["last-event-id"], undefined);
  } finally {
    await proxy.stop();
  }
});

test("a steered turn: useChat's message goes on through the steered turn as the snapshot converts it", async () => {
  const session = sessions[5]!;
  const chat = new HeadlessChat({ id: session, transport: new DexChatTransport({ api: baseUrl }) });
  const sent = chat.sendMessage({ text: "hold:n6" });
  await waitFor(() => existsSync(join(gateDir, "n6.started")), "the hold tool to start");
  const steer = await fetch(`${baseUrl}/sessions/${session}/steer`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "say going left" }),
  });
  assert.deepEqual(await steer.json(), { result: true });
  writeFileSync(join(gateDir, "n6"), "");
  await sent;
  await waitFor(() => chat.status === "ready" || chat.status === "error", "the steered turn to finish");
  assert.equal(chat.error, undefined);
  const streamed = chat.messages.at(-1)!;
  assert.equal(streamed.id, "msg_turn-1");
  assert.deepEqual(
    streamed.parts.map((p) => p.type),
    ["step-start", "dynamic-tool", "steering-message", "step-start", "text"],
  );
  const steering = streamed.parts[2]!;
  assert.ok(steering.type === "steering-message");
  assert.deepEqual(steering.parts, [{ type: "text", text: "say going left" }]);
  const text = streamed.parts[4]!;
  assert.ok(text.type === "text" && text.text === "ok going left");
  const { steeredTurns } = await fetchUiSnapshot(baseUrl, session);
  assert.deepEqual(steeredTurns, ["turn-2"]);
  const fromSnapshot = await converted(session);
  assert.deepEqual(
    fromSnapshot.map((m) => m.role),
    ["user", "assistant"],
  );
  assert.deepEqual(plain(assistant(fromSnapshot, streamed.id)), plain(streamed));
});

test("DexSessionClient: a send whose answer is lost after the server applied it is retried and applies once", async () => {
  const session = sessions[6]!;
  const proxy = new ReplyDroppingProxy(baseUrl, (r) => r.method === "POST" && r.url.endsWith("/send"));
  const api = await proxy.start();
  try {
    const client = new DexSessionClient({ api, retryDelayMs: 10 });
    assert.equal(await client.sendUserMessage(session, "say once", { clientRequestId: "live-send-1" }), true);
    assert.equal(proxy.drops, 1);
    const posts = proxy.seen.filter((r) => r.method === "POST");
    assert.equal(posts.length, 2, "the answer was lost, so the client posted again");
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { state } = (await fetchUiSnapshot(baseUrl, session)).snapshot;
      if (state && state.turnCount >= 1 && state.activeTurnId === undefined) break;
      if (Date.now() > deadline) throw new Error("timed out waiting for the turn to end");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const { snapshot } = await fetchUiSnapshot(baseUrl, session);
    assert.equal(snapshot.state?.turnCount, 1);
    assert.equal(snapshot.queuedMessageCount, 0);
    assert.deepEqual(
      snapshot.messages.map((m) => m.text),
      ["say once", "ok once"],
    );
  } finally {
    await proxy.stop();
  }
});
