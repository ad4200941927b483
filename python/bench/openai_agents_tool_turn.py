"""`bazel run //python/bench:openai_agents_tool_turn_bench`: the OpenAI Agents JS tool turn,
durable through @dex-agents/openai-agents next to the framework run plainly, in one run.

The turn (user -> model -> `lookup` read tool -> model, "x is 42.") with the same
agent and scripted `Model` (typescript/adapters/openai-agents/src/testing/
tool_turn_bench.ts): plainly, `Runner.run` in Node with the tool in-process; durably,
a session on dexlite whose pull Worker's Flow runs a `RemoteRunner` reaching
`OpenAiAgentsRunner` in the Node sidecar, a new session a turn. The durable turn is
five Steps (StartAgentSession, RunModel, CallTool, ResumeTurn, RunModel); both
RunModel Steps are a whole SDK run (the resumed one restores the `RunState` string).
"""

from __future__ import annotations

from sidecar_tool_turn import ToolTurnBench, main

BENCH = ToolTurnBench(
    package="typescript/adapters/openai-agents",
    flow_type="OpenAiAgentsBench",
    durable_steps=5,
    plain_label="plain @openai/agents Runner.run, in Node",
    durable_label="@dex-agents/openai-agents via the sidecar, pull Worker",
)


if __name__ == "__main__":
    main(BENCH, __doc__)
