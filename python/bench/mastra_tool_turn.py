"""`bazel run //python/bench:mastra_tool_turn_bench`: the Mastra tool turn, durable through
@dex-agents/mastra next to the framework run plainly, in one run.

The turn (user -> model -> `lookup` read tool -> model, "x is 42.") with the same
scripted `MockLanguageModelV4` and tool (typescript/adapters/mastra/src/testing/
tool_turn_bench.ts), all under the pinned Node 22: plainly, `Agent.generate` with
`maxSteps: 2` and the tool the agent's own (Mastra runs it in-process); through
`MastraRunner`'s three runner calls in-process, without Dex; durably, a
session on dexlite whose pull Worker's Flow runs a `RemoteRunner` reaching
`MastraRunner` in the Node sidecar, a new session a turn. The durable turn is five
Steps (StartAgentSession, RunModel, CallTool, ResumeTurn, RunModel); each RunModel
Step is one `agent.stream` call with `maxSteps: 1`.
"""

from __future__ import annotations

from sidecar_tool_turn import ToolTurnBench, main

BENCH = ToolTurnBench(
    package="typescript/adapters/mastra",
    flow_type="MastraBench",
    durable_steps=5,
    plain_label="plain Mastra Agent.generate, in Node 22",
    durable_label="@dex-agents/mastra via the sidecar, pull Worker",
    adapter_label="MastraRunner's runner calls, no Dex",
    pinned_node=True,
)


if __name__ == "__main__":
    main(BENCH, __doc__)
