/**
 * The gated copy of the application's agent graph that every RunModel Step runs.
 *
 * The SDK runs a function tool without `needsApproval` as soon as the model
 * asks for it, even when another call of the same response waits for
 * approval, so every function tool of every agent reachable through handoffs
 * is copied with `needsApproval` always true. A copy's body never does the
 * work: once the call's Dex record is final the runner approves the
 * interruption and the body returns the stored result. The copies keep the
 * agents' names, which is how `RunState.fromString` finds the current agent.
 *
 * @module
 */

import { Agent, Handoff, type FunctionTool, type Tool } from "@openai/agents";
import { storedResult } from "@dex-agents/core";

// `any`: the graph mixes agents of every context and output type.
type AnyAgent = Agent<any, any>;
type AnyFunctionTool = FunctionTool<any, any, any>;

function isFunctionTool(tool: Tool<any>): tool is AnyFunctionTool {
  return tool.type === "function";
}

function gatedTool(tool: AnyFunctionTool): AnyFunctionTool {
  return {
    ...tool,
    needsApproval: async () => true,
    invoke: async (_context, _input, details) => storedResult(tool.name, details?.toolCall?.callId),
  };
}

export class GatedGraph {
  /** The real function tools of every agent, by name (the first agent's wins). */
  readonly tools = new Map<string, AnyFunctionTool>();
  readonly start: AnyAgent;
  readonly #copies = new Map<AnyAgent, AnyAgent>();

  constructor(start: AnyAgent) {
    const queue: AnyAgent[] = [start];
    const seen = new Set<AnyAgent>();
    for (let agent = queue.shift(); agent !== undefined; agent = queue.shift()) {
      if (seen.has(agent)) continue;
      seen.add(agent);
      if (agent.mcpServers.length > 0) {
        throw new Error(
          `agent ${JSON.stringify(agent.name)} has mcpServers, whose tools the SDK would run inside the RunModel Step; give the agent function tools instead`,
        );
      }
      for (const tool of agent.tools) {
        if (isFunctionTool(tool) && !this.tools.has(tool.name)) this.tools.set(tool.name, tool);
      }
      for (const item of agent.handoffs) queue.push(item instanceof Handoff ? item.agent : item);
    }
    this.start = this.#copy(start);
  }

  #copy(agent: AnyAgent): AnyAgent {
    const known = this.#copies.get(agent);
    if (known !== undefined) return known;
    const copied = agent.clone({
      tools: agent.tools.map((t) => (isFunctionTool(t) ? gatedTool(t) : t)),
      handoffs: [],
    });
    this.#copies.set(agent, copied); // before the handoffs: graphs may have cycles
    copied.handoffs = agent.handoffs.map((item) => this.#copyHandoff(item));
    return copied;
  }

  #copyHandoff(item: AnyAgent | Handoff<any, any>): AnyAgent | Handoff<any, any> {
    if (!(item instanceof Handoff)) return this.#copy(item);
    const target = this.#copy(item.agent);
    return item.clone({
      agent: target,
      onInvokeHandoff: async (context, args) => {
        const reached = await item.onInvokeHandoff(context, args);
        return this.#copies.get(reached) ?? reached;
      },
    });
  }
}
