// capabilities.json, this adapter's column of docs/adapters.md, is what VercelAiRunner.describe()
// declares. The table is assembled from every runner's file without Node
// (tools/capabilities); `tools/capabilities.sh typescript/adapters/vercel-ai/capabilities.json`
// rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "@dex-agents/core/testing";
import { VercelAiRunner } from "./runner.js";

test("capabilities.json is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(VercelAiRunner.prototype) as VercelAiRunner,
    new URL("../capabilities.json", import.meta.url),
    "typescript/adapters/vercel-ai/capabilities.json",
  );
});
