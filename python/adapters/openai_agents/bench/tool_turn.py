"""The tool turn: plain openai-agents next to the same agent as a durable session on dexlite.

An OpenAI Agents SDK agent whose model (the SDK's ScriptedModel through
`RespondingModel`) makes one call that asks for a read tool, then a second call
that answers from the tool's result. The plain turn runs it in this process with
`Runner.run` (the tool runs inline); the durable turn runs it through
`OpenAiAgentsRunner` on dexlite with a Worker child process (listening or pull),
from `AgentSessionClient.run_turn`: five Dex Steps (StartAgentSession or
AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel), measured from the
call until the committed snapshot is back and checked.

All variants run in one invocation, one after the other, so the ratios compare
figures taken on the same machine minutes apart. "Per durable Step" divides the
turn's overhead over plain by the turn's five Steps; "per durable call" by three,
the durable calls a peer engine makes for the same turn (two model calls and one
tool call), the column the Pydantic AI bench prints.

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

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ModelCall, assistant_message, function_call
from dex import WorkerTarget
from dex_agents import AgentSessionClient, AgentSessionFlow, ToolPolicy, run_worker
from dex_agents_contracts import AgentSnapshot, MessageRole, ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing import DexliteProcess, child_env, free_port

FLOW_TYPE = "OpenAiAgentsToolTurnBench"
QUESTION = "What is the value of x?"
ANSWER = "x is 42."
DURABLE_STEPS = 5
DURABLE_CALLS = 3


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


def plain_turns(warmup: int, turns: int, *, long: bool) -> list[float]:
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


# --- the durable turn ------------------------------------------------------------------


def worker_main(server: str, listen: str | None) -> None:
    set_tracing_disabled(True)
    run_worker(
        [session_flow()],
        server_address=server,
        listen=listen,
        on_ready=lambda: print("ready", flush=True),
    )


@contextmanager
def worker_child(server: str, listen_port: int | None) -> Iterator[None]:
    args = [sys.executable, os.path.abspath(__file__), "--worker", server]
    if listen_port is not None:
        args += ["--listen", f"127.0.0.1:{listen_port}"]
    child = subprocess.Popen(args, env=child_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if not line.startswith("ready"):
            raise RuntimeError(f"the bench Worker did not start: {line!r}")
        yield
    finally:
        child.terminate()
        child.wait(timeout=60)


def check_answered(snapshot: AgentSnapshot, expected_messages: int) -> None:
    if snapshot.state is None or snapshot.state.active_turn_id is not None:
        raise AssertionError("the turn is still active in the returned snapshot")
    last = snapshot.messages[-1]
    if last.role != MessageRole.ASSISTANT or last.text != ANSWER:
        raise AssertionError(f"the turn ended with {last.role} {last.text!r}")
    if last.sequence != expected_messages:
        raise AssertionError(f"{last.sequence} messages stored, expected {expected_messages}")


def durable_turns(address: str, mode: str, warmup: int, turns: int, *, long: bool) -> list[float]:
    """Milliseconds per durable turn, from the client's call to the checked snapshot."""
    listen_port = free_port() if mode == "listen" else None
    target = (
        WorkerTarget(address=f"127.0.0.1:{listen_port}")
        if listen_port is not None
        else WorkerTarget(pull=True)
    )
    times: list[float] = []
    with (
        worker_child(address, listen_port),
        AgentSessionClient(session_flow(), server_address=address, worker_target=target) as client,
    ):
        session = f"long-{uuid.uuid4().hex[:8]}"
        for n in range(warmup + turns):
            if not long:
                session = f"fresh-{uuid.uuid4().hex}"
            elif n == 0:
                client.start_session(session)
            started = time.perf_counter()
            snapshot = client.run_turn(session, QUESTION, new_session=not long)
            elapsed = (time.perf_counter() - started) * 1000
            check_answered(snapshot, 4 * (n + 1) if long else 4)
            if n >= warmup:
                times.append(elapsed)
    return times


# --- report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    times: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def p90(self) -> float:
        return statistics.quantiles(self.times, n=10)[-1]


def print_table(plain: Row, rows: list[Row]) -> None:
    print(
        "| variant | n | turn median ms | p90 ms | per durable Step ms | per durable call ms "
        "| ratio to plain |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {plain.label} | {len(plain.times)} | {plain.median:.1f} | {plain.p90():.1f} "
        "| - | - | 1.0x |"
    )
    for row in rows:
        overhead = row.median - plain.median
        print(
            f"| {row.label} | {len(row.times)} | {row.median:.1f} | {row.p90():.1f} "
            f"| {overhead / DURABLE_STEPS:.1f} | {overhead / DURABLE_CALLS:.1f} "
            f"| {row.median / plain.median:.1f}x |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100, help="timed turns per variant")
    parser.add_argument("--warmup", type=int, default=15)
    parser.add_argument("--mode", choices=["listen", "pull", "both"], default="both")
    parser.add_argument("--variant", choices=["fresh", "long", "both"], default="both")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--listen", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_main(args.worker, args.listen)
        return

    set_tracing_disabled(True)
    modes = ["listen", "pull"] if args.mode == "both" else [args.mode]
    variants = ["fresh", "long"] if args.variant == "both" else [args.variant]
    with DexliteProcess() as dexlite:
        for variant in variants:
            long = variant == "long"
            plain = Row(
                f"plain openai-agents, in-process ({variant})",
                plain_turns(args.warmup, args.turns, long=long),
            )
            rows = [
                Row(
                    f"dex-agents-openai-agents, {variant}, {mode} Worker",
                    durable_turns(dexlite.address, mode, args.warmup, args.turns, long=long),
                )
                for mode in modes
            ]
            print()
            print_table(plain, rows)


if __name__ == "__main__":
    main()
