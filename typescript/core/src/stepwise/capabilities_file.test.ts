// stepwise_capabilities.json, the TypeScript Stepwise column of docs/adapters.md, is
// what StepwiseRunner.describe() declares. The table is assembled from every runner's
// file without Node (tools/capabilities);
// `tools/capabilities.sh typescript/core/stepwise_capabilities.json` rewrites it.
import { test } from "node:test";
import { checkCapabilitiesFile } from "../testing/capabilities_file.js";
import { StepwiseRunner } from "./runner.js";

test("capabilities.json of Stepwise is what describe() declares", () => {
  checkCapabilitiesFile(
    Object.create(StepwiseRunner.prototype) as StepwiseRunner,
    new URL("../../stepwise_capabilities.json", import.meta.url),
    "typescript/core/stepwise_capabilities.json",
  );
});
