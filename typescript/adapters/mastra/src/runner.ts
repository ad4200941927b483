/**
 * `MastraRunner`: a Mastra `Agent` on the TypeScript Stepwise loop of
 * `@dex-agents/core`. Each RunModel Step is one `agent.stream` call
 * (`MastraModelClient`); every tool call runs in its own tool Step through
 * the Mastra tool's `execute`. The session owns the history, so an agent
 * with Mastra memory is refused; so are tools configured on the agent itself,
 * at the first model call (they may be a function of the request context).
 * With `output` the answer is structured output (`output.ts`).
 *
 * @module
 */

import {
  AgentDefinition,
  StepwiseRunner,
  stepwiseRunStateFormat,
  type AgentDefinitionOptions,
  type Instructions,
  type TurnContinuationHook,
  stepwiseCapabilitiesWithout,
  type RunnerCapabilities,
} from "@dex-agents/core";
import { MastraModelClient, type MastraAgent } from "./model.js";
import type { MastraOutput } from "./output.js";
import { mastraTool, type MastraTool, type MastraToolPolicy } from "./tools.js";

export interface MastraRunnerOptions {
  /** The agent: its model and instructions; no memory and no tools of its own. */
  readonly agent: MastraAgent;
  /** The tools by the name the model calls them, each with its `execute`. */
  readonly tools?: Readonly<Record<string, MastraTool>>;
  /** Effects by tool name; a tool without one gets the session's default effect. */
  readonly toolPolicies?: Readonly<Record<string, MastraToolPolicy>>;
  /** More system instructions after the agent's own. */
  readonly instructions?: Instructions;
  readonly decideTurnContinuation?: TurnContinuationHook;
  /** `required` forces write_todos on a planning turn's first call while no draft exists. */
  readonly planningToolChoice?: AgentDefinitionOptions["planningToolChoice"];
  readonly summaryInstructions?: string;
  readonly countTokens?: AgentDefinitionOptions["countTokens"];
  /**
   * Structured output: the answer must match `output.schema` (Mastra's
   * `structuredOutput`); one that fails it or `output.validate` is stored with a
   * retry prompt and asked again in the next RunModel Step. Plain text when absent.
   */
  readonly output?: MastraOutput<any>;
}

/** The loop's run state, enveloped as Mastra's. */
const RUN_STATE = stepwiseRunStateFormat({ adapter: "mastra", framework: "@mastra/core" });

/** Mastra memory would keep a second history beside the session's. */
export class MastraMemoryError extends TypeError {
  override name = "MastraMemoryError";
}

export class MastraRunner extends StepwiseRunner {
  constructor(options: MastraRunnerOptions) {
    if (options.agent.hasOwnMemory()) {
      throw new MastraMemoryError(
        `the Mastra agent ${JSON.stringify(options.agent.name)} has memory; the Dex session owns the history, ` +
          "so give the agent no `memory`",
      );
    }
    const tools = options.tools ?? {};
    for (const name of Object.keys(options.toolPolicies ?? {})) {
      if (!(name in tools)) throw new TypeError(`toolPolicies names ${JSON.stringify(name)}, which is not one of the tools`);
    }
    super(
      new AgentDefinition({
        name: options.agent.name,
        model: new MastraModelClient(options.agent, options.output),
        tools: Object.entries(tools).map(([name, t]) => mastraTool(name, t, options.toolPolicies?.[name])),
        ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
        ...(options.decideTurnContinuation !== undefined ? { decideTurnContinuation: options.decideTurnContinuation } : {}),
        ...(options.planningToolChoice !== undefined ? { planningToolChoice: options.planningToolChoice } : {}),
        ...(options.summaryInstructions !== undefined ? { summaryInstructions: options.summaryInstructions } : {}),
        ...(options.countTokens !== undefined ? { countTokens: options.countTokens } : {}),
        ...(options.output !== undefined ? { output: options.output } : {}),
      }),
      RUN_STATE,
    );
  }

  /** The Stepwise loop's capabilities, less what Mastra's client does not map. */
  override describe(): RunnerCapabilities {
    return stepwiseCapabilitiesWithout({
      mcp_sources: "MastraRunner takes no tool sources; Mastra tools (MCPClient's among them) run as plain tools",
      mcp_tasks: "no tool sources in MastraRunner, so no MCP tasks",
      tool_task_polls: "no tool source of MastraRunner starts a task, so nothing to poll",
      tool_task_cancels: "no tool source of MastraRunner starts a task, so nothing to cancel",
    });
  }
}
