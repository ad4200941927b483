"""`bazel run //python/bench:pi_tool_turn_bench`: the Pi tool turn through Dex, as a ratio.

In one run: the tool turn ("weather in Paris?" -> get_weather -> the answer) on
pi-ai's faux provider run plainly by pi-agent-core's `Agent` and by `PiRunner`'s
three runner calls in-process (typescript/adapters/pi/src/testing/tool_turn_bench.ts),
then the same turn as a durable session: dexlite, a Worker child on a
`RemoteRunner`, and `PiRunner` in the Node sidecar (the conformance sidecar), with a
new session a turn (RunModel -> CallTool -> ResumeTurn -> RunModel).
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
from dex_agents_testing.sidecar import Sidecar, build_package
from remote_runner_hop import _turns

QUESTION = "weather in Paris?"
ANSWER = "Results: get_weather=sunny in Paris"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--plain-turns", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        package = build_package(
            Path(work), "typescript/adapters/pi", ["typescript/contracts", "typescript/core"]
        )
        plain = json.loads(
            subprocess.run(
                ["node", "dist/testing/tool_turn_bench.js", "--turns", str(args.plain_turns)],
                cwd=package,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        flow_type = "PiBench"
        log = Path(work) / "sidecar.jsonl"
        sidecar = Sidecar(
            package, log, [flow_type], script="dist/testing/conformance_sidecar.js"
        ).start()
        os.environ["DEX_AGENTS_BENCH_RUNNER_TARGET"] = sidecar.address
        try:
            with DexliteProcess() as dexlite:
                durable = _turns(
                    "remote",
                    flow_type,
                    dexlite.address,
                    args.warmup,
                    args.turns,
                    question=QUESTION,
                    answer=ANSWER,
                )
        finally:
            sidecar.stop()
    d = statistics.median(durable)
    p90 = statistics.quantiles(durable, n=10)[-1]
    print("| variant | n | turn median ms |")
    print("|---|---:|---:|")
    print(f"| pi-agent-core Agent, plain | {plain['turns']} | {plain['plain_ms']:.3f} |")
    print(f"| PiRunner's runner calls, no Dex | {plain['turns']} | {plain['adapter_ms']:.3f} |")
    print(f"| PiRunner through Dex (dexlite, Worker, sidecar) | {len(durable)} | {d:.2f} |")
    print(f"\ndurable turn p90: {p90:.2f} ms")
    print(
        f"adapter / plain: {plain['adapter_ms'] / plain['plain_ms']:.2f}x; "
        f"durable / plain: {d / plain['plain_ms']:.0f}x"
    )


if __name__ == "__main__":
    main()
