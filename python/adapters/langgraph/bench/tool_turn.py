"""The tool turn: a plain LangChain `create_agent` agent next to the same agent on dexlite.

A scripted chat model asks for a read tool, then answers from its result. The
plain turn runs the agent in this process with `ainvoke` (the tool runs inline,
an in-memory checkpointer per thread as an application would use); the durable
turn runs it through `LangGraphRunner` (see `dex_agents_testing.tool_turn`).

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/langgraph/src .venv/bin/python python/adapters/langgraph/bench/tool_turn.py

or `bazel run //python/adapters/langgraph:tool_turn_bench -- --turns 200`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_langgraph import DexCheckpointSaver, DexStepMiddleware, LangGraphRunner
from dex_agents_langgraph.testing import RespondingChatModel
from dex_agents_testing.tool_turn import ANSWER, QUESTION, ToolTurnBench, run_tool_turn_bench
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver


def read_then_answer(messages: list[BaseMessage]) -> AIMessage:
    """Asks for the read tool, then answers once the last message is its result."""
    if isinstance(messages[-1], ToolMessage):
        return AIMessage(content=ANSWER)
    call = {"id": f"c{len(messages)}", "name": "read_value", "args": {"key": "x"}}
    return AIMessage(content="", tool_calls=[call])


def model() -> RespondingChatModel:
    return RespondingChatModel(respond=read_then_answer)


@tool
def read_value(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool."""
    return f"{key} = 42"


def session_flow() -> AgentSessionFlow:
    agent = create_agent(
        model(),
        [read_value],
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
    )
    runner = LangGraphRunner(
        agent, tool_policies={"read_value": ToolPolicy(effect=ToolEffect.READ)}
    )
    return AgentSessionFlow(runner, flow_type="ToolTurnBench")


def plain_turns(warmup: int, turns: int, long: bool) -> list[float]:
    agent = create_agent(model(), [read_value], checkpointer=InMemorySaver())

    async def run() -> list[float]:
        times: list[float] = []
        thread = uuid.uuid4().hex
        for n in range(warmup + turns):
            if not long:
                thread = uuid.uuid4().hex
            config: Any = {"configurable": {"thread_id": thread}}
            started = time.perf_counter()
            result = await agent.ainvoke({"messages": [HumanMessage(QUESTION)]}, config)
            elapsed = (time.perf_counter() - started) * 1000
            if result["messages"][-1].text != ANSWER:
                raise AssertionError(f"plain turn answered {result['messages'][-1].text!r}")
            if n >= warmup:
                times.append(elapsed)
        return times

    return asyncio.run(run())


BENCH = ToolTurnBench(
    framework="plain LangGraph",
    script=__file__,
    session_flow=session_flow,
    plain_turns=plain_turns,
)

if __name__ == "__main__":
    run_tool_turn_bench(BENCH)
