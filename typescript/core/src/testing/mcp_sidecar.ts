/**
 * `node dist/testing/mcp_sidecar.js --address HOST:PORT --log PATH --flow-type
 * T --mcp-url URL`: a `StepwiseRunner` whose tools come from an
 * `McpToolSource` of one Streamable HTTP server (`jobs`, e.g. mcp_server.ts),
 * served by `serveRunners`. Its scripted model calls `jobs__job` (a task of
 * `ms` from the prompt "job <ms>") and `jobs__lookup` in one response, then
 * answers with the results it was given. Model calls go to the run log.
 * Prints `listening <address>` once up.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { McpToolSource } from "../mcp/index.js";
import { serveRunners } from "../serve.js";
import { AgentDefinition, StepwiseRunner, type ModelClient, type ModelRequest, type ModelResponse } from "../stepwise/index.js";
import { RunLog } from "./runlog.js";

const { values } = parseArgs({
  options: {
    address: { type: "string", default: "127.0.0.1:0" },
    log: { type: "string" },
    "flow-type": { type: "string", multiple: true },
    "mcp-url": { type: "string" },
  },
});
if (values.log === undefined || values["flow-type"] === undefined || values["mcp-url"] === undefined) {
  throw new Error("say --log PATH --flow-type T --mcp-url URL");
}
const runLog = new RunLog(values.log);

const model: ModelClient = {
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const results = request.messages.flatMap((m) => (m.role === "tool" ? [[m.toolCallId, m.output] as const] : []));
    runLog.write({ kind: "model", tools: request.tools.map((t) => t.name), results: Object.fromEntries(results) });
    if (results.length > 0) return { text: `Results: ${results.map(([id, out]) => `${id}=${out}`).join("; ")}`, toolCalls: [] };
    const prompt = request.messages.find((m) => m.role === "user");
    const ms = Number((prompt?.role === "user" ? prompt.text : "").split(" ")[1] ?? "0");
    return {
      toolCalls: [
        { toolCallId: "j1", toolName: "jobs__job", arguments: JSON.stringify({ ms }) },
        { toolCallId: "l1", toolName: "jobs__lookup", arguments: JSON.stringify({ city: "Paris" }) },
      ],
    };
  },
};

const source = new McpToolSource({ servers: [{ kind: "http", name: "jobs", url: values["mcp-url"] }] });
const runner = new StepwiseRunner(new AgentDefinition({ model, toolSources: [source] }));
const server = await serveRunners({
  runners: Object.fromEntries(values["flow-type"].map((t) => [t, runner])),
  address: values.address,
});
process.stdout.write(`listening ${server.address}\n`);
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
