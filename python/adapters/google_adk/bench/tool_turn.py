"""The tool turn: plain Google ADK next to the same agent as a durable session on dexlite.

An ADK `LlmAgent` whose model (a `ScriptedLlm`) makes one call that asks for a
read tool, then a second call that answers from the tool's result. The plain
turn runs it in this process with `Runner.run_async` on an
`InMemorySessionService` (the tool runs inline); the durable turn runs it through
`AdkRunner` on dexlite with a Worker child process (listening or pull), from
`AgentSessionClient.run_turn`: five Dex Steps (StartAgentSession or
AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel), measured from the
call until the committed snapshot is back and checked.

`dex_agents_testing.tool_turn` runs the variants in one invocation and prints
the tables ("per durable Step" divides the overhead over plain by the turn's
five Steps, "per durable call" by the three durable calls a peer engine makes).

Variants:
- fresh: a new session per turn;
- long: one session whose turns follow each other (plain keeps its ADK session).

Run from the repository root:

    PYTHONPATH=python/contracts/src:python/core/src:python/dexlite/src:python/testing/src:\
python/adapters/google_adk/src .venvs/google_adk/bin/python \
python/adapters/google_adk/bench/tool_turn.py

or `bazel run //python/adapters/google_adk:tool_turn_bench -- --turns 200`.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents_contracts import ToolEffect
from dex_agents_google_adk import AdkRunner
from dex_agents_google_adk.testing import ScriptedLlm, call, function_results, text
from dex_agents_testing.tool_turn import ANSWER, QUESTION, ToolTurnBench, run_tool_turn_bench
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

FLOW_TYPE = "GoogleAdkToolTurnBench"

logging.getLogger("google_adk").setLevel(logging.ERROR)  # the scripted model has no usage


# --- the agent (the same for plain and durable) ---------------------------------------


def scripted_model(request: LlmRequest) -> list[types.Part]:
    """Ask for the read tool, then answer once its result is the last content."""
    last = request.contents[-1] if request.contents else None
    if last is not None and any(p.function_response for p in last.parts or []):
        assert function_results(request)
        return [text(ANSWER)]
    return [call("read_value", {"key": "x"}, "read-1")]


def read_value(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool."""
    return f"{key} = 42"


def agent() -> LlmAgent:
    return LlmAgent(name="bench", model=ScriptedLlm(scripted_model), tools=[read_value])


def session_flow() -> AgentSessionFlow:
    runner = AdkRunner(agent(), tool_policies={"read_value": ToolPolicy(effect=ToolEffect.READ)})
    return AgentSessionFlow(runner, flow_type=FLOW_TYPE)


# --- plain Google ADK ------------------------------------------------------------------


def plain_turns(warmup: int, turns: int, long: bool) -> list[float]:
    """Milliseconds per plain turn; `long` keeps one ADK session across the turns."""
    service = InMemorySessionService()
    runner = Runner(app_name="bench", agent=agent(), session_service=service)

    async def run() -> list[float]:
        times: list[float] = []
        session_id = "long"
        await service.create_session(app_name="bench", user_id="u", session_id=session_id)
        for n in range(warmup + turns):
            started = time.perf_counter()
            if not long:
                session_id = uuid.uuid4().hex
                await service.create_session(app_name="bench", user_id="u", session_id=session_id)
            answer = ""
            message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
            async for event in runner.run_async(
                user_id="u", session_id=session_id, new_message=message
            ):
                if event.content and event.content.parts and event.content.parts[0].text:
                    answer = event.content.parts[0].text
            elapsed = (time.perf_counter() - started) * 1000
            if answer != ANSWER:
                raise AssertionError(f"plain turn answered {answer!r}")
            if n >= warmup:
                times.append(elapsed)
        return times

    return asyncio.run(run())


BENCH = ToolTurnBench(
    framework="plain Google ADK",
    script=__file__,
    session_flow=session_flow,
    plain_turns=plain_turns,
)

if __name__ == "__main__":
    run_tool_turn_bench(BENCH)
