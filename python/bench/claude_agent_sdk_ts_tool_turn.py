"""`bazel run //python/bench:claude_agent_sdk_ts_tool_turn_bench`: the Claude Agent SDK
(TypeScript) tool turn, durable through @dex-agents/claude-agent-sdk next to a plain
`query()`, in one run.

The turn (user -> model -> `lookup` read tool -> model, "x is 42.") on the real bundled
Claude Code CLI against the scripted loopback Messages API of the Node process
(typescript/adapters/claude-agent-sdk/src/testing/tool_turn_bench.ts): plainly, one
`query()` a turn with the tool allowed and served in-process; durably, a session on
dexlite whose pull Worker's Flow runs a `RemoteRunner` reaching `ClaudeAgentRunner` in
the Node sidecar, a new session a turn. The durable turn is two Steps
(StartAgentSession, RunModel): the whole-turn harness runs both model calls and the
inline read inside one CLI run, as the plain turn does. Each turn starts the CLI, so
use few turns (--turns 15 --warmup 3 takes about a minute); the plain and the durable
turns alternate in `--rounds` rounds, so the machine's load reaches both alike.
"""

from __future__ import annotations

from sidecar_tool_turn import ToolTurnBench, main

BENCH = ToolTurnBench(
    package="typescript/adapters/claude-agent-sdk",
    flow_type="ClaudeAgentSdkBench",
    durable_steps=2,
    plain_label="plain query(), the CLI in Node",
    durable_label="@dex-agents/claude-agent-sdk via the sidecar, pull Worker",
    turns=15,
    warmup=3,
    rounds=3,
)


if __name__ == "__main__":
    main(BENCH, __doc__)
