"""The tool turn of a TypeScript adapter run plainly in Node and durably through Dex.

Shared by the per-adapter benches (openai_agents_tool_turn.py,
claude_agent_sdk_ts_tool_turn.py, mastra_tool_turn.py): the package's bench script
(`dist/testing/tool_turn_bench.js`) answers remote_runner_hop's question, "What is
the value of x?" -> a `lookup` read -> "x is 42."; with `--plain N --warmup W` it
runs the framework itself and prints `{"times_ms": [...]}` (and `"adapter_ms"`, the
adapter's runner calls in-process without Dex, when it times those too), and with the
`Sidecar` arguments it serves the adapter's runner, which a session on dexlite reaches
through a pull Worker's `RemoteRunner`, a new session a turn.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.sidecar import Sidecar, build_package, pinned_node
from remote_runner_hop import _ratio_row, _turns

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
    adapter_label: str | None = None
    """The row of the script's `adapter_ms`, when it prints them."""
    pinned_node: bool = False
    """Run the script under the repository's pinned Node 22 (`sidecar.pinned_node`)."""
    turns: int = 60
    warmup: int = 10
    rounds: int = 1
    """The command line's defaults (`main`)."""

    def node(self) -> str:
        return pinned_node() if self.pinned_node else "node"


def _in_node(bench: ToolTurnBench, package: Path, warmup: int, turns: int) -> dict[str, Any]:
    args = [bench.node(), str(package / SCRIPT), "--plain", str(turns), "--warmup", str(warmup)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    times: dict[str, Any] = json.loads(out)
    return times


def run_tool_turn_bench(bench: ToolTurnBench, warmup: int, turns: int, rounds: int = 1) -> None:
    """Times the plain turns, then the durable ones, and prints one table.

    With several `rounds` the two alternate, `turns / rounds` each a round (each
    round warmed up again), so a change in the machine's load reaches both."""
    per_round = max(1, turns // rounds)
    plain: list[float] = []
    adapter: list[float] = []
    durable: list[float] = []
    with tempfile.TemporaryDirectory() as work:
        package = build_package(
            Path(work), bench.package, ["typescript/contracts", "typescript/core"]
        )
        log = Path(work) / "sidecar.jsonl"
        sidecar = Sidecar(package, log, [bench.flow_type], script=SCRIPT, node=bench.node()).start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            with DexliteProcess() as dexlite:
                for _ in range(rounds):
                    in_node = _in_node(bench, package, warmup, per_round)
                    plain += in_node["times_ms"]
                    adapter += in_node.get("adapter_ms", [])
                    durable += _turns("remote", bench.flow_type, dexlite.address, warmup, per_round)
        finally:
            sidecar.stop()
    base = statistics.median(plain)
    print("| variant | n | turn median ms | p90 ms | per durable Step ms | ratio to plain |")
    print("|---|---:|---:|---:|---:|---:|")
    print(_ratio_row(bench.plain_label, plain, None, bench.durable_steps))
    if bench.adapter_label is not None:
        print(_ratio_row(bench.adapter_label, adapter, base, None))
    print(_ratio_row(bench.durable_label, durable, base, bench.durable_steps))


def main(bench: ToolTurnBench, description: str | None) -> None:
    """A bench script's command line: `--turns`, `--warmup`, `--rounds` (the bench's defaults)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--turns", type=int, default=bench.turns)
    parser.add_argument("--warmup", type=int, default=bench.warmup)
    parser.add_argument(
        "--rounds", type=int, default=bench.rounds, help="plain and durable alternate"
    )
    args = parser.parse_args()
    run_tool_turn_bench(bench, args.warmup, args.turns, args.rounds)
