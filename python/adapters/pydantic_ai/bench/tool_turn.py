"""The tool turn: plain Pydantic AI next to the same agent as a durable session on dexlite.

A Pydantic AI agent with a scripted `FunctionModel` makes one model call that asks
for a read tool, runs the tool, and makes a second model call that answers from
its result. The plain turn runs it in this process with `Agent.run`; the durable
turn runs it through `PydanticAiRunner` on dexlite, with a Worker child process
(listening or pull), from `AgentSessionClient.run_turn`: five Dex Steps
(StartAgentSession or AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel),
measured from the call until the committed snapshot is back and checked. "Commit
to return" is how long after dexlite committed the turn's last Step (the time in
its Flow history) `run_turn` returned.

Every variant runs in one invocation, one after the other, so the ratios compare
figures taken on the same machine a minute apart. "Per durable call" divides the
turn's overhead over plain by three, the durable calls a peer engine makes for
the same turn (two model calls and one tool call).

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

from dex import WorkerTarget
from dex_agents import AgentSessionClient, AgentSessionFlow, run_worker
from dex_agents_contracts import AgentSnapshot, MessageRole
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_testing import DexliteProcess, child_env, fetch_history, free_port
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
QUESTION = "What is the value of x?"
ANSWER = "x is 42."


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


def plain_turns(warmup: int, turns: int, *, long: bool) -> list[float]:
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


# --- the durable turn ------------------------------------------------------------------


def worker_main(server: str, listen: str | None) -> None:
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
    stored = snapshot.messages[-1].sequence
    if stored != expected_messages:
        raise AssertionError(f"{stored} messages stored, expected {expected_messages}")


def last_commit_time(address: str, client: AgentSessionClient, session: str) -> float:
    """When dexlite committed the session's newest completed Step (its history's clock)."""
    run_id = client.client.describe_flow(session).run_id
    history = fetch_history(address, session, run_id)
    return max(
        event.event_time.ToNanoseconds() / 1e9
        for event in history
        if event.WhichOneof("payload") == "step_execute_completed"
    )


def durable_turns(
    address: str, mode: str, warmup: int, turns: int, *, long: bool
) -> tuple[list[float], list[float]]:
    """Milliseconds per durable turn, from the client's call to the checked snapshot, and
    from the commit of the turn's last Step until `run_turn` returned."""
    listen_port = free_port() if mode == "listen" else None
    target = (
        WorkerTarget(address=f"127.0.0.1:{listen_port}")
        if listen_port is not None
        else WorkerTarget(pull=True)
    )
    times: list[float] = []
    after_commit: list[float] = []
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
            returned = time.time()
            check_answered(snapshot, 4 * (n + 1) if long else 4)
            if n >= warmup:
                times.append(elapsed)
                committed = last_commit_time(address, client, session)
                after_commit.append((returned - committed) * 1000)
    return times, after_commit


# --- report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    times: list[float]
    after_commit: list[float] | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def p90(self) -> float:
        return statistics.quantiles(self.times, n=10)[-1]


def print_table(plain: Row, rows: list[Row]) -> None:
    print(
        "| variant | n | turn median ms | p90 ms | per durable call ms | ratio to plain "
        "| commit to return ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {plain.label} | {len(plain.times)} | {plain.median:.1f} | {plain.p90():.1f} "
        "| - | 1.0x | - |"
    )
    for row in rows:
        per_call = (row.median - plain.median) / 3
        ratio = row.median / plain.median
        after = statistics.median(row.after_commit) if row.after_commit else float("nan")
        print(
            f"| {row.label} | {len(row.times)} | {row.median:.1f} | {row.p90():.1f} "
            f"| {per_call:.1f} | {ratio:.1f}x | {after:.1f} |"
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

    modes = ["listen", "pull"] if args.mode == "both" else [args.mode]
    variants = ["fresh", "long"] if args.variant == "both" else [args.variant]
    with DexliteProcess() as dexlite:
        for variant in variants:
            long = variant == "long"
            plain = Row(
                f"plain Pydantic AI, in-process ({variant})",
                plain_turns(args.warmup, args.turns, long=long),
            )
            rows = [
                Row(
                    f"dex-agents, {variant}, {mode} Worker",
                    *durable_turns(dexlite.address, mode, args.warmup, args.turns, long=long),
                )
                for mode in modes
            ]
            print()
            print_table(plain, rows)


if __name__ == "__main__":
    main()
