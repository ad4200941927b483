"""The framework-neutral half of every adapter's tool-turn benchmark.

The tool turn is model -> read tool -> model, each turn checked. An adapter's
bench script supplies the agent twice, plainly in-process and as a session
Flow, and calls `run_tool_turn_bench`: it times the plain turns, then the same
turn through `AgentSessionClient.run_turn` on dexlite with the script itself as
the Worker child process (listening or pull), and prints one table per variant
(a new session per turn, and one long session) with medians, the overhead per
durable Step (over plain, divided by the turn's five Steps) and per durable
call (divided by the three durable calls a peer engine makes for this turn),
and the time from the commit of the turn's last Step to `run_turn`'s return.
All in one invocation, so ratios compare figures taken minutes apart on the
same machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from dex import WorkerTarget
from dex_agents import AgentSessionClient, AgentSessionFlow, run_worker
from dex_agents_contracts import AgentSnapshot, MessageRole

from dex_agents_testing.history import fetch_history
from dex_agents_testing.processes import DexliteProcess, child_env, free_port

__all__ = ["PlainTurns", "ToolTurnBench", "run_tool_turn_bench"]

QUESTION = "What is the value of x?"
ANSWER = "x is 42."
_DURABLE_STEPS = 5
"""StartAgentSession or AwaitUserMessage, RunModel, CallTool, ResumeTurn, RunModel."""
_DURABLE_CALLS = 3
"""What a peer engine makes durable for this turn: two model calls and one tool call."""

PlainTurns = Callable[[int, int, bool], list[float]]
"""(warmup, turns, long) -> milliseconds per timed plain turn, each checked."""


@dataclass(frozen=True)
class ToolTurnBench:
    framework: str
    """How the table names the plain variant ("plain LangGraph")."""
    script: str
    """The bench script's path: run with `--worker ADDRESS [--listen HOST:PORT]` it serves
    `session_flow()`; `run_tool_turn_bench` passes those arguments on."""
    session_flow: Callable[[], AgentSessionFlow]
    plain_turns: PlainTurns
    messages_per_turn: int = 4
    """Messages a turn stores: user, the call, its result, the answer."""
    durable_steps: int = _DURABLE_STEPS
    """The turn's Dex Steps: 3 for a whole-turn harness (the read runs inside RunModel)."""


def _worker_main(bench: ToolTurnBench, server: str, listen: str | None) -> None:
    run_worker(
        [bench.session_flow()],
        server_address=server,
        listen=listen,
        on_ready=lambda: print("ready", flush=True),
    )


@contextmanager
def _worker_child(bench: ToolTurnBench, server: str, listen_port: int | None) -> Iterator[None]:
    args = [sys.executable, os.path.abspath(bench.script), "--worker", server]
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


def _check_answered(snapshot: AgentSnapshot, expected_messages: int) -> None:
    if snapshot.state is None or snapshot.state.active_turn_id is not None:
        raise AssertionError("the turn is still active in the returned snapshot")
    last = snapshot.messages[-1]
    if last.role != MessageRole.ASSISTANT or last.text != ANSWER:
        raise AssertionError(f"the turn ended with {last.role} {last.text!r}")
    if last.sequence != expected_messages:
        raise AssertionError(f"{last.sequence} messages stored, expected {expected_messages}")


def _last_commit_time(address: str, client: AgentSessionClient, session: str) -> float:
    """When dexlite committed the session's newest completed Step (its history's clock)."""
    run_id = client.client.describe_flow(session).run_id
    return max(
        event.event_time.ToNanoseconds() / 1e9
        for event in fetch_history(address, session, run_id)
        if event.WhichOneof("payload") == "step_execute_completed"
    )


def _durable_turns(
    bench: ToolTurnBench, address: str, mode: str, warmup: int, turns: int, *, long: bool
) -> tuple[list[float], list[float]]:
    listen_port = free_port() if mode == "listen" else None
    target = (
        WorkerTarget(address=f"127.0.0.1:{listen_port}")
        if listen_port is not None
        else WorkerTarget(pull=True)
    )
    times: list[float] = []
    after_commit: list[float] = []
    flow = bench.session_flow()
    with (
        _worker_child(bench, address, listen_port),
        AgentSessionClient(flow, server_address=address, worker_target=target) as client,
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
            per_turn = bench.messages_per_turn
            _check_answered(snapshot, per_turn * (n + 1) if long else per_turn)
            if n >= warmup:
                times.append(elapsed)
                after_commit.append((returned - _last_commit_time(address, client, session)) * 1000)
    return times, after_commit


@dataclass(frozen=True)
class _Row:
    label: str
    times: list[float]
    after_commit: list[float] | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    def p90(self) -> float:
        return statistics.quantiles(self.times, n=10)[-1]


def _print_table(plain: _Row, rows: Sequence[_Row], durable_steps: int = _DURABLE_STEPS) -> None:
    print(
        "| variant | n | turn median ms | p90 ms | per durable Step ms | per durable call ms "
        "| ratio to plain | commit to return ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {plain.label} | {len(plain.times)} | {plain.median:.1f} | {plain.p90():.1f} "
        "| - | - | 1.0x | - |"
    )
    for row in rows:
        after = statistics.median(row.after_commit) if row.after_commit else float("nan")
        overhead = row.median - plain.median
        print(
            f"| {row.label} | {len(row.times)} | {row.median:.1f} | {row.p90():.1f} "
            f"| {overhead / durable_steps:.1f} | {overhead / _DURABLE_CALLS:.1f} "
            f"| {row.median / plain.median:.1f}x | {after:.1f} |"
        )


def run_tool_turn_bench(bench: ToolTurnBench, argv: Sequence[str] | None = None) -> None:
    """The bench script's `main`: the Worker child when called with `--worker`."""
    parser = argparse.ArgumentParser(description=f"The tool turn: {bench.framework} vs dex-agents")
    parser.add_argument("--turns", type=int, default=100, help="timed turns per variant")
    parser.add_argument("--warmup", type=int, default=15)
    parser.add_argument("--mode", choices=["listen", "pull", "both"], default="both")
    parser.add_argument("--variant", choices=["fresh", "long", "both"], default="both")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--listen", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker_main(bench, args.worker, args.listen)
        return
    modes = ["listen", "pull"] if args.mode == "both" else [args.mode]
    variants = ["fresh", "long"] if args.variant == "both" else [args.variant]
    with DexliteProcess() as dexlite:
        for variant in variants:
            long = variant == "long"
            plain = _Row(
                f"{bench.framework}, in-process ({variant})",
                bench.plain_turns(args.warmup, args.turns, long),
            )
            rows = [
                _Row(
                    f"dex-agents, {variant}, {mode} Worker",
                    *_durable_turns(
                        bench, dexlite.address, mode, args.warmup, args.turns, long=long
                    ),
                )
                for mode in modes
            ]
            print()
            _print_table(plain, rows, bench.durable_steps)
