// capabilities.json, this adapter's column of docs/adapters.md, is what ClaudeAgentRunner.describe()
// declares. The table is assembled from every runner's file without Node
// (tools/capabilities); `tools/capabilities.sh typescript/adapters/claude-agent-sdk/capabilities.json`
// rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "@dex-agents/core/testing";
import { ClaudeAgentRunner } from "./runner.js";

test("capabilities.json is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(ClaudeAgentRunner.prototype) as ClaudeAgentRunner,
    new URL("../capabilities.json", import.meta.url),
    "typescript/adapters/claude-agent-sdk/capabilities.json",
  );
});
