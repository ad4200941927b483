"""The tool turn: plain openai-agents next to the same agent as a durable session on dexlite.

An OpenAI Agents SDK agent whose model (the SDK's ScriptedModel through
`RespondingModel`) makes one call that asks for a read tool, then a second call
that answers from the tool's result. The plain turn runs it in this process with
`Runner.run` (the tool runs inline); the durable turn runs it through
`OpenAiAgentsRunner` on dexlite with a Worker child process (listening or pull),
from `AgentSessionClient.run_turn`: five Dex Steps (StartAgentSession or
AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel), measured from the
call until the committed snapshot is back and checked.

`dex_agents_testing.tool_turn` runs the variants in one invocation and prints
the tables ("per durable Step" divides the overhead over plain by the turn's
five Steps, "per durable call" by the three durable calls a peer engine makes).

Variants:
- fresh: a new session per turn (`start_session` with the message, then the turn);
- long: one session whose turns follow each other; its last turns run with a
  history of `4 * turns` stored items (plain passes the same history).

Run from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/openai_agents/src .venv/bin/python python/adapters/openai_agents/bench/tool_turn.py

or `bazel run //python/adapters/openai_agents:tool_turn_bench -- --turns 200`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing.tool_turn import ANSWER, QUESTION, ToolTurnBench, run_tool_turn_bench

FLOW_TYPE = "OpenAiAgentsToolTurnBench"

set_tracing_disabled(True)  # no trace export without an OpenAI key, here and in the Worker child


# --- the agent (the same for plain and durable) ---------------------------------------


def scripted_model(call: ModelCall) -> Any:
    """Ask for the read tool, then answer once its output is the last input item."""
    last = call.input[-1] if isinstance(call.input, list) and call.input else {}
    kind = last.get("type") if isinstance(last, dict) else getattr(last, "type", None)
    if kind == "function_call_output":
        return [assistant_message(ANSWER)]
    return [function_call("read_value", {"key": "x"}, call_id="read-1")]


@function_tool
def read_value(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool."""
    return f"{key} = 42"


def agent() -> Agent[None]:
    return Agent(name="bench", model=RespondingModel(scripted_model), tools=[read_value])


def session_flow() -> AgentSessionFlow:
    runner = OpenAiAgentsRunner(
        agent(), tool_policies={"read_value": ToolPolicy(effect=ToolEffect.READ)}, stream=False
    )
    return AgentSessionFlow(runner, flow_type=FLOW_TYPE)


# --- plain openai-agents ---------------------------------------------------------------


def plain_turns(warmup: int, turns: int, long: bool) -> list[float]:
    """Milliseconds per plain turn; `long` carries the history from turn to turn."""
    plain = agent()

    async def run() -> list[float]:
        history: list[Any] = []
        times: list[float] = []
        for n in range(warmup + turns):
            started = time.perf_counter()
            turn_input = [*history, {"role": "user", "content": QUESTION}]
            result = await Runner.run(plain, turn_input)
            elapsed = (time.perf_counter() - started) * 1000
            if result.final_output != ANSWER:
                raise AssertionError(f"plain turn answered {result.final_output!r}")
            if long:
                history = result.to_input_list()
            if n >= warmup:
                times.append(elapsed)
        return times

    return asyncio.run(run())


BENCH = ToolTurnBench(
    framework="plain openai-agents",
    script=__file__,
    session_flow=session_flow,
    plain_turns=plain_turns,
)

if __name__ == "__main__":
    run_tool_turn_bench(BENCH)
