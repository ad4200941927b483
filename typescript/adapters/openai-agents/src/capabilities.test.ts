// capabilities.json, this adapter's column of docs/adapters.md, is what OpenAiAgentsRunner.describe()
// declares. The table is assembled from every runner's file without Node
// (tools/capabilities); `tools/capabilities.sh typescript/adapters/openai-agents/capabilities.json`
// rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "@dex-agents/core/testing";
import { OpenAiAgentsRunner } from "./runner.js";

test("capabilities.json is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(OpenAiAgentsRunner.prototype) as OpenAiAgentsRunner,
    new URL("../capabilities.json", import.meta.url),
    "typescript/adapters/openai-agents/capabilities.json",
  );
});
