"""Stepwise's own cost per Step, in-process and without Dex.

Runs the turn RunModel -> CallTool -> RunModel many times with a zero-latency
scripted model and tool, calling `run_model_step` and
`execute_deferred_tool_call` directly, and prints microseconds per Step. The
session's bookkeeping between Steps (storing messages, building records) is
done here by hand and left out of the timings; comparing these figures with the
same turn on Dex shows what durability costs per Step.

    PYTHONPATH=python/contracts/src:python/core/src \
        .venv/bin/python python/core/bench/stepwise_inprocess.py --turns 2000
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from dataclasses import dataclass, field

from dex_agents import ToolPolicy
from dex_agents._runner.values import pending_record
from dex_agents.models import ScriptedModelClient, ScriptEntry, scripted_answer, scripted_tool_calls
from dex_agents.offline import NullEventWriter, no_checkpoint, no_heartbeat, stored_message
from dex_agents.runner import (
    AgentTurnContext,
    DeferredToolExecution,
    ToolCallsRequested,
    ToolExecutionResult,
    TurnCompleted,
)
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import (
    AgentMessage,
    AgentToolCall,
    ToolCallStatus,
    ToolEffect,
)

FLOW_ID = "bench-session"


def lookup(key: str) -> str:
    """Returns at once: the bench measures the loop, not the tool."""
    return f"value of {key}"


async def lookup_async(key: str) -> str:
    return f"value of {key}"


@dataclass
class Timings:
    first_model_step: list[float] = field(default_factory=list)
    tool_step: list[float] = field(default_factory=list)
    second_model_step: list[float] = field(default_factory=list)


def context(
    turn_id: str,
    messages: list[AgentMessage],
    run_state: str | None,
    records: tuple[AgentToolCall, ...],
    flow_id: str = FLOW_ID,
) -> AgentTurnContext:
    return AgentTurnContext(
        flow_id=flow_id,
        turn_id=turn_id,
        attempt=1,
        messages=tuple(messages),
        framework_run_state=run_state,
        tool_calls=records,
        tool_policies={},
        default_tool_effect=ToolEffect.UNCLASSIFIED,
        events=NullEventWriter(),
        heartbeat=no_heartbeat,
    )


async def one_turn(
    runner: StepwiseRunner,
    turn_id: str,
    messages: list[AgentMessage],
    timings: Timings,
    *,
    flow_id: str = FLOW_ID,
) -> TurnCompleted:
    """RunModel -> the one requested tool call -> RunModel, over `messages` (the stored history)."""
    started = time.perf_counter()
    requested = await runner.run_model_step(context(turn_id, messages, None, (), flow_id))
    timings.first_model_step.append(time.perf_counter() - started)
    assert isinstance(requested, ToolCallsRequested)
    [call] = requested.tool_calls
    record = pending_record(call, turn_id=turn_id, deferral_order=0)
    execution = DeferredToolExecution(
        flow_id=flow_id,
        turn_id=turn_id,
        tool_call=record,
        idempotency_key=f"{flow_id}/{turn_id}/{call.tool_call_id}",
        attempt=1,
        events=NullEventWriter(),
        heartbeat=no_heartbeat,
        save_heartbeat_checkpoint=no_checkpoint,
    )

    started = time.perf_counter()
    result = await runner.execute_deferred_tool_call(execution)
    timings.tool_step.append(time.perf_counter() - started)
    assert isinstance(result, ToolExecutionResult)  # a plain function tool starts no task

    final = dataclasses.replace(record, status=ToolCallStatus.SUCCEEDED, output=result.output)
    resume = context(turn_id, messages, requested.framework_run_state, (final,), flow_id)
    started = time.perf_counter()
    completed = await runner.run_model_step(resume)
    timings.second_model_step.append(time.perf_counter() - started)
    assert isinstance(completed, TurnCompleted)
    return completed


def script(turns: int) -> list[ScriptEntry]:
    entries: list[ScriptEntry] = []
    for _ in range(turns):
        entries.append(scripted_tool_calls(("call-1", "lookup", '{"key":"x"}')))
        entries.append(scripted_answer("x is 42."))
    return entries


async def measure(turns: int, warmup: int, use_async_tool: bool) -> Timings:
    model = ScriptedModelClient(script(turns + warmup), record_requests=False)
    chosen = tool(
        lookup_async if use_async_tool else lookup,
        name="lookup",
        policy=ToolPolicy(effect=ToolEffect.READ),
    )
    runner = StepwiseRunner(AgentDefinition(instructions="Answer.", tools=[chosen], model=model))
    discard = Timings()
    for n in range(warmup):
        await _fresh_turn(runner, n, discard)
    timings = Timings()
    for n in range(turns):
        await _fresh_turn(runner, warmup + n, timings)
    return timings


async def _fresh_turn(runner: StepwiseRunner, turn_number: int, timings: Timings) -> None:
    """A turn over a history of just its own user message."""
    turn_id = f"turn-{turn_number}"
    messages = [stored_message(runner.build_user_message("What is x?"), 1, turn_id)]
    await one_turn(runner, turn_id, messages, timings)


def _report(name: str, samples: list[float]) -> str:
    micros = sorted(s * 1e6 for s in samples)
    p99 = micros[min(len(micros) - 1, int(len(micros) * 0.99))]
    return (
        f"  {name:<44} mean {statistics.fmean(micros):8.1f} us   "
        f"median {statistics.median(micros):8.1f} us   p99 {p99:8.1f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args()
    for label, use_async in (("sync tool (worker thread)", False), ("async tool", True)):
        timings = asyncio.run(measure(args.turns, args.warmup, use_async))
        steps = timings.first_model_step + timings.tool_step + timings.second_model_step
        print(f"Stepwise in-process, {args.turns} turns, {label}:")
        print(_report("RunModel -> ToolCallsRequested", timings.first_model_step))
        print(_report("CallTool (execute_deferred_tool_call)", timings.tool_step))
        print(_report("RunModel (resume) -> TurnCompleted", timings.second_model_step))
        print(_report("per Step, all three", steps))


if __name__ == "__main__":
    main()
