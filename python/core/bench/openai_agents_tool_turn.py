"""`bazel run //python/core:openai_agents_tool_turn_bench`: the OpenAI Agents JS tool turn,
durable through @dex-agents/openai-agents next to the framework run plainly, in one run.

The turn (user -> model -> `lookup` read tool -> model, "x is 42.") with the same
agent and scripted `Model` (typescript/adapters/openai-agents/src/testing/
tool_turn_bench.ts): plainly, `Runner.run` in Node with the tool in-process; durably,
a session on dexlite whose pull Worker's Flow runs a `RemoteRunner` reaching
`OpenAiAgentsRunner` in the Node sidecar, a new session a turn. The durable turn is
five Steps (StartAgentSession, RunModel, CallTool, ResumeTurn, RunModel); both
RunModel Steps are a whole SDK run (the resumed one restores the `RunState` string).
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
from remote_sidecar import Sidecar, build_package

FLOW_TYPE = "OpenAiAgentsBench"
DURABLE_STEPS = 5
SCRIPT = "dist/testing/tool_turn_bench.js"


def _plain(package: Path, warmup: int, turns: int) -> list[float]:
    script = package / SCRIPT
    args = ["node", str(script), "--plain", str(turns), "--warmup", str(warmup)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    times: list[float] = json.loads(out)["times_ms"]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        package = build_package(
            Path(work),
            "typescript/adapters/openai-agents",
            ["typescript/contracts", "typescript/core"],
        )
        plain = _plain(package, args.warmup, args.turns)
        sidecar = Sidecar(package, Path(work) / "sidecar.jsonl", [FLOW_TYPE], script=SCRIPT)
        sidecar.start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            with DexliteProcess() as dexlite:
                durable = _turns("remote", FLOW_TYPE, dexlite.address, args.warmup, args.turns)
        finally:
            sidecar.stop()
    base = statistics.median(plain)
    print("| variant | n | turn median ms | p90 ms | per durable Step ms | ratio to plain |")
    print("|---|---:|---:|---:|---:|---:|")
    print(_ratio_row("plain @openai/agents Runner.run, in Node", plain, None, DURABLE_STEPS))
    print(
        _ratio_row(
            "@dex-agents/openai-agents via the sidecar, pull Worker", durable, base, DURABLE_STEPS
        )
    )


if __name__ == "__main__":
    main()
