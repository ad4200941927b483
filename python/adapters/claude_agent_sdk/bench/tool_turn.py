"""The tool turn: plain Claude Agent SDK next to the same agent as a durable session on dexlite.

The bundled CLI, pointed at the scripted fake Messages API on loopback, makes one
model call that asks for a read tool (an in-process SDK MCP tool), runs it, then
a second call that answers from its result. The plain turn is `query()` in this
process; the durable turn runs the same agent through `ClaudeAgentRunner` on
dexlite with a Worker child process (listening or pull), from
`AgentSessionClient.run_turn`: three Dex Steps (StartAgentSession or
AwaitUserMessage, and one RunModel that runs the whole turn, the read inline).
Both spawn the CLI once per turn, which dominates either figure.

`dex_agents_testing.tool_turn` runs the variants in one invocation and prints
the tables ("per durable Step" divides the overhead over plain by the turn's
Steps, "per durable call" by the three durable calls a peer engine makes).

Run from the repository root (each turn starts the 400 MB CLI: keep --turns small):

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/claude_agent_sdk/src .venvs/claude_agent_sdk/bin/python \
python/adapters/claude_agent_sdk/bench/tool_turn.py --turns 10 --warmup 2
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import tempfile
import time
from collections.abc import Mapping
from typing import Any

from claude_agent_sdk import (
    ResultMessage,
    SdkMcpTool,
    ToolAnnotations,
    create_sdk_mcp_server,
    query,
    tool,
)
from dex_agents import AgentSessionFlow
from dex_agents_claude_agent_sdk import ClaudeAgentRunner
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)
from dex_agents_testing.tool_turn import ANSWER, QUESTION, ToolTurnBench, run_tool_turn_bench

FLOW_TYPE = "ClaudeToolTurnBench"
READ_TOOL = "mcp__bench__read_value"


def scripted_model(request: MessagesRequest) -> ScriptedReply:
    """Ask for the read tool, then answer once its result came back."""
    messages = request.messages
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if MessagesRequest({"messages": messages[last + 1 :]}).tool_results():
        return text_reply(ANSWER)
    return tool_use_reply((f"read-{len(request.tool_uses()) + 1}", READ_TOOL, {"key": "x"}))


@tool(
    "read_value",
    "Returns at once: the bench measures the loop, not the tool.",
    {"key": str},
    annotations=ToolAnnotations(readOnlyHint=True),
)
async def read_value(args: Mapping[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"{args['key']} = 42"}]}


@functools.cache
def api() -> FakeMessagesServer:
    return FakeMessagesServer(scripted_model).start()


def session_flow() -> AgentSessionFlow:
    tools: list[SdkMcpTool[Any]] = [read_value]
    runner = ClaudeAgentRunner(offline_options(api().base_url), tools={"bench": tools})
    return AgentSessionFlow(runner, flow_type=FLOW_TYPE)


def plain_turns(warmup: int, turns: int, long: bool) -> list[float]:
    """Milliseconds per plain `query()` turn; `long` resumes one CLI session."""

    config_dir = tempfile.mkdtemp(prefix="claude-bench-")  # the plain CLI's transcripts

    async def run() -> list[float]:
        times: list[float] = []
        session: str | None = None
        for n in range(warmup + turns):
            options = offline_options(
                api().base_url,
                mcp_servers={"bench": create_sdk_mcp_server("bench", tools=[read_value])},
                allowed_tools=[READ_TOOL],
                resume=session if long else None,
                env={"CLAUDE_CONFIG_DIR": config_dir},
                cwd=config_dir,
            )
            started = time.perf_counter()
            answer = None
            async for message in query(prompt=QUESTION, options=options):
                if isinstance(message, ResultMessage):
                    answer = message.result
                    session = message.session_id
            elapsed = (time.perf_counter() - started) * 1000
            if answer != ANSWER:
                raise AssertionError(f"plain turn answered {answer!r}")
            if n >= warmup:
                times.append(elapsed)
        return times

    try:
        return asyncio.run(run())
    finally:
        shutil.rmtree(config_dir, ignore_errors=True)


BENCH = ToolTurnBench(
    framework="plain Claude Agent SDK",
    script=__file__,
    session_flow=session_flow,
    plain_turns=plain_turns,
    durable_steps=3,
)

if __name__ == "__main__":
    run_tool_turn_bench(BENCH)
