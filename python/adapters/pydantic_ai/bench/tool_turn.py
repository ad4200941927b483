"""The tool turn: plain Pydantic AI next to the same agent as a durable session on dexlite.

A Pydantic AI agent with a scripted `FunctionModel` makes one model call that asks
for a read tool, runs the tool, and makes a second model call that answers from
its result. The plain turn runs it in this process with `Agent.run`; the durable
turn runs it through `PydanticAiRunner` on dexlite, with a Worker child process
(listening or pull), from `AgentSessionClient.run_turn`: five Dex Steps
(StartAgentSession or AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel),
measured from the call until the committed snapshot is back and checked
(`dex_agents_testing.tool_turn` runs the variants and prints the tables).

Variants:
- fresh: a new session per turn (`start_session` with the message, then the turn);
- long: one session whose turns follow each other; its last turns run with a
  history of `2 * 4 * turns` stored messages (plain passes the same history).

Run from the repository root (about a minute per Worker mode with the defaults):

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/pydantic_ai/src .venv/bin/python python/adapters/pydantic_ai/bench/tool_turn.py

or `bazel run //python/adapters/pydantic_ai:tool_turn_bench -- --turns 200`.
"""

from __future__ import annotations

import asyncio
import time

from dex_agents import AgentSessionFlow
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_testing.tool_turn import ANSWER, QUESTION, ToolTurnBench, run_tool_turn_bench
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

FLOW_TYPE = "ToolTurnBench"

# --- the agent (the same for plain and durable) ---------------------------------------


def scripted_model(messages: list[ModelMessage], _: AgentInfo) -> ModelResponse:
    """Ask for the read tool, then answer once its result is the last request's part."""
    last = messages[-1].parts
    if any(isinstance(part, ToolReturnPart) for part in last):
        return ModelResponse(parts=[TextPart(content=ANSWER)])
    return ModelResponse(parts=[ToolCallPart("read_value", {"key": "x"})])


def read_value(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool."""
    return f"{key} = 42"


def durable_agent() -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(scripted_model), output_type=[str, DeferredToolRequests]
    )
    agent.tool_plain(metadata={"dex_effect": "read"})(read_value)
    return agent


def plain_agent() -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(scripted_model))
    agent.tool_plain(read_value)
    return agent


def session_flow() -> AgentSessionFlow:
    return AgentSessionFlow(PydanticAiRunner(durable_agent()), flow_type=FLOW_TYPE)


# --- plain Pydantic AI ----------------------------------------------------------------


def plain_turns(warmup: int, turns: int, long: bool) -> list[float]:
    """Milliseconds per plain turn; `long` carries the history from turn to turn."""
    agent = plain_agent()

    async def run() -> list[float]:
        history: list[ModelMessage] = []
        times: list[float] = []
        for n in range(warmup + turns):
            started = time.perf_counter()
            result = await agent.run(QUESTION, message_history=history if long else None)
            elapsed = (time.perf_counter() - started) * 1000
            if result.output != ANSWER:
                raise AssertionError(f"plain turn answered {result.output!r}")
            if long:
                history = result.all_messages()
            if n >= warmup:
                times.append(elapsed)
        return times

    return asyncio.run(run())


BENCH = ToolTurnBench(
    framework="plain Pydantic AI",
    script=__file__,
    session_flow=session_flow,
    plain_turns=plain_turns,
)

if __name__ == "__main__":
    run_tool_turn_bench(BENCH)
