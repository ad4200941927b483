/**
 * `PiRunner`: pi-ai models and Pi tools on the TypeScript Stepwise loop of
 * `@dex-agents/core`. Each RunModel Step is one pi-ai `stream` call; every
 * tool call is deferred to its own tool Step, so pi-agent-core's own loop
 * (which runs tools inside the model turn) is not used, only its tool type.
 *
 * @module
 */

import {
  AgentDefinition,
  StepwiseRunner,
  stepwiseCapabilitiesWithout,
  stepwiseRunStateFormat,
  type RunnerCapabilities,
  type AgentDefinitionOptions,
  type Instructions,
  type TurnContinuationHook,
} from "@dex-agents/core";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import type { Api, Model } from "@mariozechner/pi-ai";
import { PiModelClient, type PiModelClientOptions } from "./model.js";
import { piTool, type PiToolPolicy } from "./tools.js";

export interface PiRunnerOptions extends PiModelClientOptions {
  /** A pi-ai model, e.g. `getModel("anthropic", "claude-sonnet-4-5")`. */
  readonly model: Model<Api>;
  readonly tools?: readonly AgentTool<any>[];
  /** Effects by tool name; a tool without one gets the session's default effect. */
  readonly toolPolicies?: Readonly<Record<string, PiToolPolicy>>;
  readonly instructions?: Instructions;
  readonly decideTurnContinuation?: TurnContinuationHook;
  readonly summaryInstructions?: string;
  readonly countTokens?: AgentDefinitionOptions["countTokens"];
}

/** The loop's run state, enveloped as Pi's. */
const RUN_STATE = stepwiseRunStateFormat({ adapter: "pi", framework: "@mariozechner/pi-ai" });

export class PiRunner extends StepwiseRunner {
  constructor(options: PiRunnerOptions) {
    const known = new Set((options.tools ?? []).map((t) => t.name));
    for (const name of Object.keys(options.toolPolicies ?? {})) {
      if (!known.has(name)) throw new TypeError(`toolPolicies names ${JSON.stringify(name)}, which is not one of the tools`);
    }
    super(
      new AgentDefinition({
        model: new PiModelClient(options.model, options.streamOptions !== undefined ? { streamOptions: options.streamOptions } : {}),
        tools: (options.tools ?? []).map((t) => piTool(t, options.toolPolicies?.[t.name])),
        ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
        ...(options.decideTurnContinuation !== undefined ? { decideTurnContinuation: options.decideTurnContinuation } : {}),
        ...(options.summaryInstructions !== undefined ? { summaryInstructions: options.summaryInstructions } : {}),
        ...(options.countTokens !== undefined ? { countTokens: options.countTokens } : {}),
        // The summary call keeps room for the output tokens each call asks for.
        ...(options.streamOptions?.maxTokens !== undefined ? { maxOutputTokens: options.streamOptions.maxTokens } : {}),
      }),
      RUN_STATE,
    );
  }

  override describe(): RunnerCapabilities {
    return stepwiseCapabilitiesWithout({
      mcp_sources: "PiRunner takes no tool sources; its tools are Pi AgentTools",
      mcp_tasks: "no tool sources in PiRunner, so no MCP tasks",
      structured_output: "PiRunnerOptions has no output definition for the loop yet",
      tool_task_polls: "no tool source of PiRunner starts a task, so nothing to poll",
      tool_task_cancels: "no tool source of PiRunner starts a task, so nothing to cancel",
    });
  }
}
