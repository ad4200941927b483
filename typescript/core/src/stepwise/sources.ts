/**
 * Tool sources: tools a Stepwise agent learns at run time (for example the
 * MCP servers of `@dex-agents/core/mcp`), as `dex_agents.stepwise.ToolSource`
 * in Python. Typed by what the runner uses, so Stepwise never loads an SDK.
 *
 * @module
 */

import type {
  DeferredToolExecution,
  DeferredToolOutcome,
  ToolTaskCancellation,
  ToolTaskPoll,
  ToolTaskPollOutcome,
} from "../runner.js";
import type { StepwiseTool } from "./definition.js";

/**
 * Lists tools once per runner (that is, per Worker process), and rebuilds one
 * from a call record's `toolSourceReference`, so a tool Step needs no listing.
 */
export interface StepwiseToolSource {
  /** The source's tools, leaving out names in `taken` (the agent's own tools, earlier sources'). */
  stepwiseTools(taken: readonly string[]): Promise<readonly StepwiseTool[]>;
  /** The tool a call record names, or undefined when it is not this source's. */
  stepwiseTool(toolName: string, toolSourceReference: string): StepwiseTool | undefined;
}

/**
 * A source whose tools may start remote tasks (an `McpToolSource`). The
 * runner hands it every call whose record it `owns` whole, so it can return
 * `task_started`, and the task's polls and its cancellation.
 */
export interface TaskToolSource extends StepwiseToolSource {
  owns(toolSourceReference: string): boolean;
  executeDeferredToolCall(call: DeferredToolExecution): Promise<DeferredToolOutcome>;
  pollToolTask(poll: ToolTaskPoll): Promise<ToolTaskPollOutcome>;
  cancelToolTask(cancellation: ToolTaskCancellation): Promise<void>;
}

export function isTaskToolSource(source: StepwiseToolSource): source is TaskToolSource {
  const s = source as Partial<TaskToolSource>;
  return (
    typeof s.owns === "function" &&
    typeof s.executeDeferredToolCall === "function" &&
    typeof s.pollToolTask === "function" &&
    typeof s.cancelToolTask === "function"
  );
}
