/**
 * The tool turn of `python/bench/claude_agent_sdk_ts_tool_turn.py`:
 * "What is the value of x?" -> a `lookup` read -> "x is 42.", the real
 * bundled CLI against the scripted loopback Messages API of this process.
 *
 * `--plain N --warmup W` runs it N + W times with a plain `query()` (the tool
 * allowed by `allowedTools`, served in-process, one config directory for all
 * runs, as one user's would be) and prints `{"times_ms": [...]}` for the N
 * measured runs. `--address A --log PATH --flow-type T` (the `Sidecar`
 * arguments) serves `ClaudeAgentRunner` on the same model and tool instead.
 *
 * @module
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSdkMcpServer, query, tool, type Options, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import { conformanceSidecarArgs, plainBenchArgs, serveConformanceRunner, timedRuns } from "@dex-agents/core/testing";
import { z } from "zod";
import { ClaudeAgentRunner } from "../index.js";
import { FakeMessagesServer, offlineEnv, textReply, toolUseReply } from "./fake_messages.js";

const QUESTION = "What is the value of x?";
const ANSWER = "x is 42.";

let calls = 0;
const server = await FakeMessagesServer.start((request) => {
  server.requests.length = 0; // the bench reads none; they would pile up for the whole run
  const results = request.newResults();
  // Only the lookup's own result earns the answer (a denied call would get an error text).
  if (results.length > 0) return textReply(results.every(([, text]) => text === "42") ? ANSWER : `no lookup: ${JSON.stringify(results)}`);
  calls += 1;
  return toolUseReply([`l${calls}`, "mcp__bench__lookup", { key: "x" }]);
});
const lookup = tool("lookup", "Looks a value up.", { key: z.string() }, async () => ({ content: [{ type: "text", text: "42" }] }), {
  annotations: { readOnlyHint: true },
});
const agent: Options = { model: "claude-scripted", tools: [], settingSources: [], maxTurns: 8, env: offlineEnv(server.baseUrl) };

/** One plain `query()` run of the question; its answer. */
async function plainTurn(config: string): Promise<string> {
  let finished!: () => void;
  const ended = new Promise<void>((resolve) => (finished = resolve));
  async function* prompt(): AsyncGenerator<SDKUserMessage> {
    yield { type: "user", message: { role: "user", content: [{ type: "text", text: QUESTION }] }, parent_tool_use_id: null };
    await ended; // the in-process server answers over this stream until the result
  }
  let answer = "";
  try {
    for await (const message of query({
      prompt: prompt(),
      options: {
        ...agent,
        mcpServers: { bench: createSdkMcpServer({ name: "bench", tools: [lookup] }) },
        allowedTools: ["mcp__bench__lookup"],
        env: { ...process.env, ...agent.env, CLAUDE_CONFIG_DIR: config },
        cwd: config,
      },
    })) {
      if (message.type === "result") {
        answer = message.subtype === "success" ? message.result : message.subtype;
        finished();
      }
    }
  } finally {
    finished();
  }
  return answer;
}

const plainArgs = plainBenchArgs(3);
if (plainArgs !== undefined) {
  const config = mkdtempSync(join(tmpdir(), "dex-claude-bench-"));
  let times: number[];
  try {
    times = await timedRuns(plainArgs, async () => {
      const answer = await plainTurn(config);
      if (answer !== ANSWER) throw new Error(`the plain run ended with ${JSON.stringify(answer)}`);
    });
  } finally {
    rmSync(config, { recursive: true, force: true });
    await server.close();
  }
  process.stdout.write(`${JSON.stringify({ times_ms: times })}\n`);
} else {
  const runner = new ClaudeAgentRunner({ options: agent, tools: { bench: [lookup] } });
  await serveConformanceRunner(conformanceSidecarArgs(), runner, () => server.close());
}
