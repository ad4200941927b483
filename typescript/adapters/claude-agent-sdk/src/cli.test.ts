/**
 * The facts the runner is to be built on, checked against the real bundled
 * Claude Code CLI and the scripted loopback Messages API (no key, no network):
 * a PreToolUse `allow` runs an in-process SDK tool inline, a `defer` ends the
 * run with `tool_deferred` and the call in `deferred_tool_use`, and the
 * transcript reaches a `SessionStore` the runner can keep in Dex.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  createSdkMcpServer,
  query,
  tool,
  type HookCallback,
  type SDKResultMessage,
  type SDKUserMessage,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";
import { FakeMessagesServer, offlineEnv, textReply, toolUseReply } from "./testing/fake_messages.js";

class MemoryStore implements SessionStore {
  readonly entries: SessionStoreEntry[] = [];
  async append(_key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    this.entries.push(...structuredClone(entries));
  }
  async load(): Promise<SessionStoreEntry[] | null> {
    return this.entries.length > 0 ? structuredClone(this.entries) : null;
  }
}

test("an inline read runs in the CLI; a deferred write ends the run with tool_deferred", async () => {
  const server = await FakeMessagesServer.start((request) => {
    const results = request.newResults();
    if (results.length > 0) return textReply(`Results: ${results.map(([, text]) => text).join("; ")}`);
    return toolUseReply(["r1", "mcp__app__get_weather", { city: "Rome" }], ["k1", "mcp__app__book_trip", { city: "Rome" }]);
  });
  const ran: string[] = [];
  const weather = tool("get_weather", "The weather in a city.", { city: z.string() }, async ({ city }) => {
    ran.push(`get_weather ${city}`);
    return { content: [{ type: "text", text: `sunny in ${city}` }] };
  }, { annotations: { readOnlyHint: true } });
  const book = tool("book_trip", "Books a trip.", { city: z.string() }, async ({ city }) => {
    ran.push(`book_trip ${city}`);
    return { content: [{ type: "text", text: `booked ${city}` }] };
  });
  const decided: [string, string | undefined][] = [];
  const hook: HookCallback = async (input, toolUseId) => {
    const name = input.hook_event_name === "PreToolUse" ? input.tool_name : "";
    decided.push([name, toolUseId]);
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: name.endsWith("__book_trip") ? "defer" : "allow",
      },
    };
  };
  const store = new MemoryStore();
  const config = mkdtempSync(join(tmpdir(), "dex-claude-"));
  let finished!: () => void;
  const ended = new Promise<void>((resolve) => (finished = resolve));
  async function* prompt(): AsyncGenerator<SDKUserMessage> {
    yield { type: "user", message: { role: "user", content: [{ type: "text", text: "book Rome" }] }, parent_tool_use_id: null };
    await ended; // the in-process server answers over this stream until the result
  }
  try {
    let result: SDKResultMessage | undefined;
    for await (const message of query({
      prompt: prompt(),
      options: {
        model: "claude-scripted",
        tools: [],
        settingSources: [],
        maxTurns: 8,
        cwd: config,
        sessionId: randomUUID(),
        sessionStore: store,
        env: { ...process.env, ...offlineEnv(server.baseUrl), CLAUDE_CONFIG_DIR: config },
        mcpServers: { app: createSdkMcpServer({ name: "app", tools: [weather, book] }) },
        hooks: { PreToolUse: [{ hooks: [hook] }] },
      },
    })) {
      if (message.type === "result") {
        result = message;
        finished();
      }
    }
    assert.ok(result !== undefined);
    assert.equal(result.subtype, "success");
    if (result.subtype !== "success") return;
    assert.equal(result.stop_reason, "tool_deferred");
    assert.deepEqual(result.deferred_tool_use, { id: "k1", name: "mcp__app__book_trip", input: { city: "Rome" } });
    assert.deepEqual(decided, [["mcp__app__get_weather", "r1"], ["mcp__app__book_trip", "k1"]]);
    assert.deepEqual(ran, ["get_weather Rome"], "the read ran inline, the write did not run");
    assert.equal(server.requests.length, 1);
    assert.deepEqual(server.otherPaths, []);
    const types = store.entries.map((e) => e.type);
    assert.ok(types.includes("user") && types.includes("assistant"), `the transcript reached the store: ${types.join(",")}`);
  } finally {
    finished();
    rmSync(config, { recursive: true, force: true });
    await server.close();
  }
});
