// capabilities.json, this adapter's column of docs/adapters.md, is what MastraRunner.describe()
// declares. The table is assembled from every runner's file without Node
// (tools/capabilities); `tools/capabilities.sh typescript/adapters/mastra/capabilities.json`
// rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "@dex-agents/core/testing";
import { MastraRunner } from "./runner.js";

test("capabilities.json is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(MastraRunner.prototype) as MastraRunner,
    new URL("../capabilities.json", import.meta.url),
    "typescript/adapters/mastra/capabilities.json",
  );
});
