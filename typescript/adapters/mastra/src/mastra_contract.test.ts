// What the runner will build on, checked against @mastra/core itself with a
// scripted AI SDK model (no key, no network): client tools with maxSteps 1 stop
// the agent with the model's calls unrun, and results fed back as AI SDK tool
// messages reach the model on the next call.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { createTool } from "@mastra/core/tools";
import { MockLanguageModelV4 } from "ai/test";
import { z } from "zod";

const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};

const getWeather = createTool({
  id: "get_weather",
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
});

// @mastra/core 1.71.0 bundles its own copy of the AI SDK provider types, which
// ai 7.0.173's MockLanguageModelV4 does not match structurally in tsc (its
// doGenerate result lacks the bundled copy's stream); at run time Mastra wraps
// it as a V4 model and calls doGenerate, which the tests below show.
function asMastraModel(model: MockLanguageModelV4): MastraModelConfig {
  return model as unknown as MastraModelConfig;
}

test("clientTools with maxSteps 1: one model call, the call returned unrun", async () => {
  let modelCalls = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      modelCalls += 1;
      return {
        content: [{ type: "tool-call", toolCallId: "w1", toolName: "get_weather", input: '{"city":"Paris"}' }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  const agent = new Agent({ id: "probe", name: "probe", instructions: "Be brief.", model: asMastraModel(model) });
  const out = await agent.generate("Weather in Paris?", { clientTools: { get_weather: getWeather }, maxSteps: 1 });
  assert.equal(modelCalls, 1);
  assert.equal(out.finishReason, "tool-calls");
  assert.deepEqual(
    out.toolCalls.map((call) => [call.payload.toolCallId, call.payload.toolName, call.payload.args]),
    [["w1", "get_weather", { city: "Paris" }]],
  );
  assert.equal(out.toolResults.length, 0);
});

test("a tool result fed back as an AI SDK tool message reaches the model", async () => {
  const seen: string[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      for (const message of options.prompt) {
        if (message.role === "tool") {
          for (const part of message.content) {
            if (part.type === "tool-result") seen.push(`${part.toolCallId}:${JSON.stringify(part.output)}`);
          }
        }
      }
      return {
        content: [{ type: "text", text: "It is sunny." }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  const agent = new Agent({ id: "probe", name: "probe", instructions: "Be brief.", model: asMastraModel(model) });
  const out = await agent.generate(
    [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "w1", toolName: "get_weather", input: { city: "Paris" } }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "w1", toolName: "get_weather", output: { type: "text", value: "sunny" } }] },
    ],
    { clientTools: { get_weather: getWeather }, maxSteps: 1 },
  );
  assert.equal(out.text, "It is sunny.");
  assert.deepEqual(seen, ['w1:{"type":"text","value":"sunny"}']);
});
