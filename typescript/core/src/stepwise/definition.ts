/**
 * `AgentDefinition`: what a Stepwise agent is (instructions, tools with their
 * effects, model, continuation hook, plan mode and compaction settings).
 *
 * @module
 */

import { InteractionMode, type ToolEffect } from "@dex-agents/contracts";
import type { DeferredToolExecution } from "../runner.js";
import { approximateTokens, DEFAULT_SUMMARY_INSTRUCTIONS, type TokenCounter } from "./compaction.js";
import type { TurnContinuationHook } from "./continuation.js";
import type { ModelClient, ToolSpec } from "./model.js";
import type { StructuredOutput } from "./output.js";
import type { StepwiseToolSource } from "./sources.js";

/** One tool: the model sees its spec; the session runs `execute` in the call's tool Step. */
export interface StepwiseTool extends ToolSpec {
  /** What the tool does to the world; the session's `toolPolicies` win over it. */
  readonly effect?: ToolEffect;
  readonly requiresApproval?: boolean;
  /** What a `StepwiseToolSource` needs to call the tool in its Step without a listing. */
  readonly sourceReference?: string;
  /**
   * Runs the tool once with the parsed arguments; a string is shown to the
   * model as is, anything else as JSON. Throw `ToolExecutionError` for a
   * failure the model should see.
   */
  execute(args: Record<string, unknown>, call: DeferredToolExecution): Promise<unknown>;
}

export interface InstructionContext {
  readonly sessionSettings: Readonly<Record<string, unknown>>;
  readonly flowId: string;
  readonly turnId: string;
  readonly interactionMode: InteractionMode;
}

export type Instructions = string | ((context: InstructionContext) => string | Promise<string>);

export interface AgentDefinitionOptions {
  readonly name?: string;
  readonly instructions?: Instructions;
  readonly tools?: readonly StepwiseTool[];
  /** Sources of tools listed at run time (e.g. `McpToolSource` of `@dex-agents/core/mcp`). */
  readonly toolSources?: readonly StepwiseToolSource[];
  /** Give exactly one of `model` and `modelResolver`. */
  readonly model?: ModelClient;
  /** Maps the turn's session settings to the client of one model call. */
  readonly modelResolver?: (sessionSettings: Readonly<Record<string, unknown>>) => ModelClient;
  /** Called after every model response. */
  readonly decideTurnContinuation?: TurnContinuationHook;
  /** `required` forces write_todos on a planning turn's first call while no draft exists. */
  readonly planningToolChoice?: "auto" | "required";
  readonly summaryInstructions?: string;
  /** Output tokens the model may use, kept out of the summary call's input budget. */
  readonly maxOutputTokens?: number;
  readonly countTokens?: TokenCounter;
  /**
   * The answer is structured output: the model client asks its framework for
   * the schema it was built with, and the loop retries a bad answer.
   */
  readonly output?: StructuredOutput<any>;
}

/** A Stepwise agent; the constructor checks what the Python `AgentDefinition` checks. */
export class AgentDefinition {
  readonly name: string;
  readonly instructions: Instructions | undefined;
  readonly tools: readonly StepwiseTool[];
  readonly toolSources: readonly StepwiseToolSource[];
  readonly decideTurnContinuation: TurnContinuationHook | undefined;
  readonly planningToolChoice: "auto" | "required";
  readonly summaryInstructions: string;
  readonly maxOutputTokens: number;
  readonly countTokens: TokenCounter;
  readonly output: StructuredOutput<any> | undefined;
  readonly #model: ModelClient | undefined;
  readonly #resolver: AgentDefinitionOptions["modelResolver"];

  constructor(options: AgentDefinitionOptions) {
    if ((options.model === undefined) === (options.modelResolver === undefined)) {
      throw new TypeError("`AgentDefinition` needs exactly one of `model` and `modelResolver`");
    }
    const seen = new Set<string>();
    for (const t of options.tools ?? []) {
      if (!t.name) throw new TypeError("a tool needs a non-empty name");
      if (seen.has(t.name)) throw new TypeError(`two tools are named ${JSON.stringify(t.name)}`);
      seen.add(t.name);
    }
    this.name = options.name ?? "agent";
    this.instructions = options.instructions;
    this.tools = [...(options.tools ?? [])];
    this.toolSources = [...(options.toolSources ?? [])];
    this.decideTurnContinuation = options.decideTurnContinuation;
    this.planningToolChoice = options.planningToolChoice ?? "auto";
    this.summaryInstructions = options.summaryInstructions ?? DEFAULT_SUMMARY_INSTRUCTIONS;
    this.maxOutputTokens = options.maxOutputTokens ?? 0;
    this.countTokens = options.countTokens ?? approximateTokens;
    this.output = options.output;
    this.#model = options.model;
    this.#resolver = options.modelResolver;
  }

  toolNamed(name: string): StepwiseTool | undefined {
    return this.tools.find((t) => t.name === name);
  }

  resolveModel(sessionSettings: Readonly<Record<string, unknown>>): ModelClient {
    return this.#resolver !== undefined ? this.#resolver(sessionSettings) : (this.#model as ModelClient);
  }

  async renderInstructions(context: InstructionContext): Promise<string | undefined> {
    if (this.instructions === undefined || typeof this.instructions === "string") return this.instructions;
    return await this.instructions(context);
  }
}
