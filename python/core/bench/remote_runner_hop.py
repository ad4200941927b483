"""`bazel run //python/core:remote_runner_hop_bench`: the cost of the runner service hop.

In one run, the tool turn (user -> RunModel -> CallTool -> RunModel, the
tool-turn bench's question) on dexlite twice: a Worker child whose Flow runs a
Python runner, and one whose Flow runs a `RemoteRunner` reaching the same
scripted runner in the Node sidecar (typescript/core/src/testing). Both
runners answer the same way, so the difference is the hop: four runner calls
a turn (build_user_message, two run_model_step, one execute_deferred_tool_call).
It also times the hop alone: `run_model_step` through the service against the
Python runner in-process, without Dex.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dex_agents import AgentSessionClient, AgentSessionFlow, RemoteRunner, run_worker
from dex_agents._runner.values import deferred_tool_call
from dex_agents.offline import NullEventWriter, no_heartbeat, stored_message
from dex_agents.results import model_visible_result
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkMessage,
    ToolCallsRequested,
    ToolExecutionResult,
    TurnCompleted,
)
from dex_agents_contracts import AgentUsage, MessageRole, ToolEffect
from dex_agents_testing.processes import DexliteProcess, child_env
from dex_agents_testing.sidecar import Sidecar, build_core_package

QUESTION = "What is the value of x?"
ANSWER = "x is 42."
RUNNER_CALLS_PER_TURN = 4


class PythonTwin:
    """The scripted sidecar runner's answers to the question, in Python."""

    def build_user_message(self, text: str) -> FrameworkMessage:
        return FrameworkMessage(
            role=MessageRole.USER, framework_item=json.dumps({"role": "user"}), text=text
        )

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        usage = AgentUsage(model_calls=1, input_tokens=10, output_tokens=2)
        if turn.framework_run_state is not None:
            tools = [
                FrameworkMessage(
                    role=MessageRole.TOOL,
                    framework_item="{}",
                    tool_call_id=c.tool_call_id,
                    tool_name=c.tool_name,
                    tool_output=model_visible_result(c),
                )
                for c in turn.tool_calls
            ]
            call = FrameworkMessage(
                role=MessageRole.ASSISTANT, framework_item="{}", tool_call_id="l1"
            )
            answer = FrameworkMessage(role=MessageRole.ASSISTANT, framework_item="{}", text=ANSWER)
            return TurnCompleted(new_messages=[call, *tools, answer], usage=usage)
        policy = turn.resolve_tool_policy("lookup", ToolEffect.READ)
        call_id = f"l{turn.turn_id.split('-')[-1]}"
        return ToolCallsRequested(
            framework_run_state="[]",
            tool_calls=[
                deferred_tool_call(
                    tool_call_id=call_id, tool_name="lookup", arguments='{"key":"x"}', policy=policy
                )
            ],
            usage=usage,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        await call.heartbeat()
        return ToolExecutionResult(output="42")


def _flow(kind: str, flow_type: str) -> AgentSessionFlow:
    runner = (
        PythonTwin()
        if kind == "python"
        else RemoteRunner(os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"], flow_type)
    )
    return AgentSessionFlow(runner, flow_type=flow_type)


@contextmanager
def _worker(kind: str, flow_type: str, server: str) -> Iterator[None]:
    args = [sys.executable, os.path.abspath(__file__), "--worker", server, kind, flow_type]
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


def _turns(
    kind: str,
    flow_type: str,
    server: str,
    warmup: int,
    turns: int,
    *,
    question: str = QUESTION,
    answer: str = ANSWER,
) -> list[float]:
    """Durable turns' latencies in ms, a new session a turn, each checked for `answer`."""
    times: list[float] = []
    with (
        _worker(kind, flow_type, server),
        AgentSessionClient(_flow(kind, flow_type), server_address=server) as client,
    ):
        for n in range(warmup + turns):
            session = f"hop-{uuid.uuid4().hex}"
            started = time.perf_counter()
            snapshot = client.run_turn(session, question, new_session=True)
            elapsed = (time.perf_counter() - started) * 1000
            if snapshot.messages[-1].text != answer:
                raise AssertionError(f"{kind}: the turn ended with {snapshot.messages[-1].text!r}")
            if n >= warmup:
                times.append(elapsed)
    return times


def _ratio_row(
    label: str, times: list[float], plain: float | None, durable_steps: int | None
) -> str:
    """A table row of a framework bench: n, median and p90 ms, and against the plain run's
    median (None for the plain row itself) the ratio and, for a durable row (its Steps
    given), the ms each Step adds."""
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    added = None if plain is None or durable_steps is None else (median - plain) / durable_steps
    per_step = "-" if added is None else f"{added:.2f}"
    ratio = "1.0x" if plain is None else f"{median / plain:.1f}x"
    return f"| {label} | {len(times)} | {median:.2f} | {p90:.2f} | {per_step} | {ratio} |"


def _hop_alone(target: str, flow_type: str, calls: int) -> tuple[float, float]:
    """Median microseconds of one run_model_step: in-process, and through the service."""
    remote = RemoteRunner(target, flow_type)
    local = PythonTwin()
    message = local.build_user_message(QUESTION)
    turn = AgentTurnContext(
        flow_id="bench",
        turn_id="turn-1",
        attempt=1,
        messages=[stored_message(message, 1, "turn-1")],
        framework_run_state=None,
        tool_calls=[],
        tool_policies={},
        default_tool_effect=ToolEffect.UNCLASSIFIED,
        events=NullEventWriter(),
        heartbeat=no_heartbeat,
    )

    async def measure(runner: object) -> float:
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await runner.run_model_step(turn)  # type: ignore[attr-defined]
            times.append((time.perf_counter() - started) * 1e6)
        return statistics.median(times[calls // 10 :])

    return asyncio.run(measure(local)), asyncio.run(measure(remote))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        server, kind, flow_type = args.worker
        run_worker(
            [_flow(kind, flow_type)],
            server_address=server,
            on_ready=lambda: print("ready", flush=True),
        )
        return
    with tempfile.TemporaryDirectory() as work:
        package = build_core_package(Path(work))
        log = Path(work) / "sidecar.jsonl"
        sidecar = Sidecar(package, log, ["HopRemote"]).start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            local_us, remote_us = _hop_alone(sidecar.address, "HopRemote", args.calls)
            with DexliteProcess() as dexlite:
                python = _turns("python", "HopPython", dexlite.address, args.warmup, args.turns)
                remote = _turns("remote", "HopRemote", dexlite.address, args.warmup, args.turns)
        finally:
            sidecar.stop()
    p, r = statistics.median(python), statistics.median(remote)
    print("| variant | n | turn median ms | p90 ms |")
    print("|---|---:|---:|---:|")
    for label, times in (("Python runner", python), ("RemoteRunner via Node sidecar", remote)):
        p90 = statistics.quantiles(times, n=10)[-1]
        print(f"| {label} | {len(times)} | {statistics.median(times):.2f} | {p90:.2f} |")
    print(
        f"\nadded per turn: {r - p:.2f} ms; per runner call ({RUNNER_CALLS_PER_TURN} a turn): "
        f"{(r - p) / RUNNER_CALLS_PER_TURN:.2f} ms"
    )
    print(
        f"run_model_step alone: in-process {local_us:.0f} us, through the service "
        f"{remote_us:.0f} us, hop {remote_us - local_us:.0f} us"
    )


if __name__ == "__main__":
    main()
