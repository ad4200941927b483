"""`bazel run //python/core:mastra_tool_turn_bench`: the Mastra tool turn, durable through
@dex-agents/mastra next to the framework run plainly, in one run.

The turn (user -> model -> `lookup` read tool -> model, "x is 42.") with the same
scripted `MockLanguageModelV4` and tool (typescript/adapters/mastra/src/testing/
tool_turn_bench.ts), all under the pinned Node 22: plainly, `Agent.generate` with
`maxSteps: 2` and the tool the agent's own (Mastra runs it in-process); through
`MastraRunner`'s three runner calls in-process, without Dex; durably, a
session on dexlite whose pull Worker's Flow runs a `RemoteRunner` reaching
`MastraRunner` in the Node sidecar, a new session a turn. The durable turn is five
Steps (StartAgentSession, RunModel, CallTool, ResumeTurn, RunModel); each RunModel
Step is one `agent.stream` call with `maxSteps: 1`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

from dex_agents_testing.processes import DexliteProcess
from remote_runner_hop import _ratio_row, _turns
from remote_sidecar import Sidecar, build_package, pinned_node

FLOW_TYPE = "MastraBench"
DURABLE_STEPS = 5
SCRIPT = "dist/testing/tool_turn_bench.js"


def _in_node(package: Path, node: str, warmup: int, turns: int) -> tuple[list[float], list[float]]:
    """(plain `Agent.generate` turns, `MastraRunner` turns without Dex), in ms."""
    args = [node, str(package / SCRIPT), "--plain", str(turns), "--warmup", str(warmup)]
    out = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    plain: list[float] = out["times_ms"]
    adapter: list[float] = out["adapter_ms"]
    return plain, adapter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    node = pinned_node()
    with tempfile.TemporaryDirectory() as work:
        package = build_package(
            Path(work), "typescript/adapters/mastra", ["typescript/contracts", "typescript/core"]
        )
        plain, adapter = _in_node(package, node, args.warmup, args.turns)
        log = Path(work) / "sidecar.jsonl"
        sidecar = Sidecar(package, log, [FLOW_TYPE], script=SCRIPT, node=node).start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            with DexliteProcess() as dexlite:
                durable = _turns("remote", FLOW_TYPE, dexlite.address, args.warmup, args.turns)
        finally:
            sidecar.stop()
    base = statistics.median(plain)
    print("| variant | n | turn median ms | p90 ms | per durable Step ms | ratio to plain |")
    print("|---|---:|---:|---:|---:|---:|")
    print(_ratio_row("plain Mastra Agent.generate, in Node 22", plain, None, DURABLE_STEPS))
    print(_ratio_row("MastraRunner's runner calls, no Dex", adapter, base, None))
    print(
        _ratio_row("@dex-agents/mastra via the sidecar, pull Worker", durable, base, DURABLE_STEPS)
    )


if __name__ == "__main__":
    main()
