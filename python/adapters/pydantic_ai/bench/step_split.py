"""Where the adapter's share of the tool turn goes: thread CPU per Step, without Dex.

The tool turn of `tool_turn.py` (the same agent and scripted model), driven
through `PydanticAiRunner` with the offline `FakeSession`: the first RunModel,
the tool Step and the resumed RunModel, each timed with `time.thread_time`
(CPU of this thread, so other processes on the machine move it less than wall
time). The plain turn (`Agent.run`, both model calls and the tool) is timed the
same way just before each durable turn, so every row is next to its own plain
figure. Each variant runs with the runner's decoded-item cache on and off
(`decoded_item_cache_bytes=0`), in one run; "long" carries the history, so its
last turns run with `4 * turns` stored messages.

    PYTHONPATH=python/contracts/src:python/core/src:python/adapters/pydantic_ai/src \\
        .venv/bin/python python/adapters/pydantic_ai/bench/step_split.py [--turns 150]

or `bazel run //python/adapters/pydantic_ai:step_split_bench`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

from dex_agents._runner.values import pending_record

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES
from dex_agents.offline import FakeSession
from dex_agents.runner import ToolCallsRequested, ToolExecutionResult, TurnCompleted
from dex_agents_contracts import ToolCallStatus
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_testing.tool_turn import ANSWER, QUESTION
from pydantic_ai.messages import ModelMessage
from tool_turn import durable_agent, plain_agent

T = TypeVar("T")


@dataclass
class Split:
    """Thread CPU milliseconds per turn, by part."""

    plain: list[float] = field(default_factory=list)
    first_model: list[float] = field(default_factory=list)
    tool: list[float] = field(default_factory=list)
    resumed_model: list[float] = field(default_factory=list)


async def timed(awaitable: Awaitable[T], into: list[float]) -> T:
    started = time.thread_time()
    result = await awaitable
    into.append((time.thread_time() - started) * 1000)
    return result


async def measure(warmup: int, turns: int, *, long: bool, cache_bytes: int) -> Split:
    runner = PydanticAiRunner(durable_agent(), decoded_item_cache_bytes=cache_bytes)
    plain = plain_agent()
    session = FakeSession(runner)
    history: list[ModelMessage] = []
    split, kept = Split(), Split()
    for n in range(warmup + turns):
        into = kept if n >= warmup else split
        if not long:
            session.messages = []
        result = await timed(plain.run(QUESTION, message_history=history or None), into.plain)
        if long:
            history = result.all_messages()
        session.start_turn(QUESTION)
        asked = await timed(runner.run_model_step(session.context()), into.first_model)
        if not isinstance(asked, ToolCallsRequested):
            raise AssertionError(f"the first model call returned {asked!r}")
        session.append(asked.new_messages)
        session.run_state = asked.framework_run_state
        call = asked.tool_calls[0]
        session.tool_calls.append(pending_record(call, turn_id=session.turn_id, deferral_order=0))
        output = await timed(
            runner.execute_deferred_tool_call(session.execution(call.tool_call_id)), into.tool
        )
        if not isinstance(output, ToolExecutionResult):
            raise AssertionError(f"the tool Step returned {output!r}")
        session.finish(call.tool_call_id, ToolCallStatus.SUCCEEDED, output=output.output)
        done = await timed(runner.run_model_step(session.context()), into.resumed_model)
        if not isinstance(done, TurnCompleted) or done.new_messages[-1].text != ANSWER:
            raise AssertionError(f"the resumed model call returned {done!r}")
        session.append(done.new_messages)
    return kept


def row(label: str, split: Split) -> str:
    def median(values: list[float]) -> float:
        return statistics.median(values)

    durable = median(split.first_model) + median(split.tool) + median(split.resumed_model)
    return (
        f"| {label} | {len(split.plain)} | {median(split.plain):.2f} "
        f"| {median(split.first_model):.2f} | {median(split.tool):.2f} "
        f"| {median(split.resumed_model):.2f} | {durable:.2f} "
        f"| {durable / median(split.plain):.1f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=150, help="timed turns per variant")
    parser.add_argument("--warmup", type=int, default=15)
    args = parser.parse_args()
    print(
        "| variant | n | plain turn | first RunModel | tool Step | resumed RunModel "
        "| three Steps | Steps / plain |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for long in (False, True):
        for cache_bytes in (0, DEFAULT_ITEM_CACHE_BYTES):
            label = f"{'long' if long else 'fresh'}, item cache {'on' if cache_bytes else 'off'}"
            split = asyncio.run(
                measure(args.warmup, args.turns, long=long, cache_bytes=cache_bytes)
            )
            print(row(label, split))
    print(
        "(thread CPU ms, medians; long: the last turns run with "
        f"{4 * (args.warmup + args.turns)} stored messages)"
    )


if __name__ == "__main__":
    main()
