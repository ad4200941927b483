"""The tool turn of a TypeScript adapter run plainly in Node and durably through Dex.

Shared by the per-adapter benches (openai_agents_tool_turn.py,
claude_agent_sdk_ts_tool_turn.py): the package's bench script
(`dist/testing/tool_turn_bench.js`) answers remote_runner_hop's question, "What is
the value of x?" -> a `lookup` read -> "x is 42."; with `--plain N --warmup W` it
runs the framework itself and prints `{"times_ms": [...]}`, and with the `Sidecar`
arguments it serves the adapter's runner, which a session on dexlite reaches through
a pull Worker's `RemoteRunner`, a new session a turn.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dex_agents_testing.processes import DexliteProcess
from remote_runner_hop import _turns
from remote_sidecar import Sidecar, build_package

SCRIPT = "dist/testing/tool_turn_bench.js"


@dataclass(frozen=True)
class ToolTurnBench:
    package: str
    """The adapter's directory under the repository root."""
    flow_type: str
    durable_steps: int
    """Steps of the durable turn, StartAgentSession included."""
    plain_label: str
    durable_label: str


def _plain(package: Path, warmup: int, turns: int) -> list[float]:
    args = ["node", str(package / SCRIPT), "--plain", str(turns), "--warmup", str(warmup)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    times: list[float] = json.loads(out)["times_ms"]
    return times


def _row(label: str, times: list[float], plain: float | None, steps: int) -> str:
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    per_step = "-" if plain is None else f"{(median - plain) / steps:.2f}"
    ratio = "1.00x" if plain is None else f"{median / plain:.2f}x"
    return f"| {label} | {len(times)} | {median:.2f} | {p90:.2f} | {per_step} | {ratio} |"


def run_tool_turn_bench(bench: ToolTurnBench, warmup: int, turns: int, rounds: int = 1) -> None:
    """Times the plain turns, then the durable ones, and prints one table.

    With several `rounds` the two alternate, `turns / rounds` each a round (each
    round warmed up again), so a change in the machine's load reaches both."""
    per_round = max(1, turns // rounds)
    plain: list[float] = []
    durable: list[float] = []
    with tempfile.TemporaryDirectory() as work:
        package = build_package(
            Path(work), bench.package, ["typescript/contracts", "typescript/core"]
        )
        log = Path(work) / "sidecar.jsonl"
        sidecar = Sidecar(package, log, [bench.flow_type], script=SCRIPT).start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            with DexliteProcess() as dexlite:
                for _ in range(rounds):
                    plain += _plain(package, warmup, per_round)
                    durable += _turns("remote", bench.flow_type, dexlite.address, warmup, per_round)
        finally:
            sidecar.stop()
    base = statistics.median(plain)
    print("| variant | n | turn median ms | p90 ms | per durable Step ms | ratio to plain |")
    print("|---|---:|---:|---:|---:|---:|")
    print(_row(bench.plain_label, plain, None, bench.durable_steps))
    print(_row(bench.durable_label, durable, base, bench.durable_steps))
