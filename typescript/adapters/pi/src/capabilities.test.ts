// capabilities.json, this adapter's column of docs/adapters.md, is what PiRunner.describe()
// declares. The table is assembled from every runner's file without Node
// (tools/capabilities); `tools/capabilities.sh typescript/adapters/pi/capabilities.json`
// rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "@dex-agents/core/testing";
import { PiRunner } from "./runner.js";

test("capabilities.json is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(PiRunner.prototype) as PiRunner,
    new URL("../capabilities.json", import.meta.url),
    "typescript/adapters/pi/capabilities.json",
  );
});
