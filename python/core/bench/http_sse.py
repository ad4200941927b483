"""Events per second through the HTTP app's SSE, and commit-to-parse latency.

A Stepwise session on dexlite (its Worker a child process) streams one answer of
`--words` text deltas, `--interval` seconds apart. A reader follows the session's
plain SSE (`GET /sessions/{id}/events`, uvicorn on loopback, httpx2) while the
turn runs and stamps each event as it parses it; the latency of an event is that
stamp minus the time dexlite committed the event to its Stream (the Stream
message's created time, read afterwards through the Client; milliseconds, the
same clock). Then `--readers` readers replay the finished turn at once, which
gives events per second when the reader is not waiting for the model.

    bazel run //python/core:http_sse_bench -- --words 2000 --readers 20
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx2
import uvicorn
from dex_agents import AgentSessionClient, AgentSessionFlow, AgentSessionOptions
from dex_agents.http import HttpLimits, create_app
from dex_agents.models import ModelRequest, ModelResponse, ScriptedModelClient, ScriptedResponse
from dex_agents.stepwise import AgentDefinition, StepwiseRunner
from dex_agents_testing import DexliteProcess, FactoryScenario, WorkerProcess, free_port, wait_until

_END = "turn_completed"


class _WordsModel:
    """Answers `<n> <interval>` with n one-word deltas, `interval` seconds apart."""

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        last = request.messages[-1]
        words, interval = str(getattr(last, "text", "1 0")).split()
        chunks = [f"w{i} " for i in range(int(words))]
        entry = ScriptedResponse(
            text="".join(chunks), text_chunks=chunks, delta_interval_seconds=float(interval)
        )
        return await ScriptedModelClient([entry]).complete(request)


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    model = _WordsModel()
    definition = AgentDefinition(model_resolver=lambda settings: model)
    options = AgentSessionOptions(event_stream_capacity_bytes=64 * 1024 * 1024)
    return AgentSessionFlow(
        StepwiseRunner(definition), flow_type=str(config["flow_type"]), options=options
    )


def _follow(base: str, session: str, stamps: dict[str, float], count: list[int]) -> None:
    with httpx2.stream("GET", f"{base}/sessions/{session}/events", timeout=120) as response:
        event_id = None
        for line in response.iter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: ") and event_id is not None:
                value = json.loads(line[6:])
                stamps[event_id] = time.time()
                count[0] += 1
                if value["type"] == _END:
                    return


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=0.002)
    parser.add_argument("--readers", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dex-http-bench-") as root:
        server = DexliteProcess(Path(root) / "dex.sqlite").start()
        scenario = FactoryScenario(factory="http_sse:flow", config={"flow_type": "HttpBench"})
        worker = WorkerProcess(server.address, scenario.save(Path(root) / "s.json")).start()
        client = AgentSessionClient(scenario.build_flow(), server_address=server.address)
        app = create_app(client, limits=HttpLimits(max_streams=args.readers + 8))
        port = free_port()
        web = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
        thread = threading.Thread(target=web.run, daemon=True)
        thread.start()
        wait_until(lambda: web.started or None, timeout=30, what="uvicorn")
        base = f"http://127.0.0.1:{port}"
        try:
            client.start_session("bench")
            stamps: dict[str, float] = {}
            count = [0]
            live = threading.Thread(target=_follow, args=(base, "bench", stamps, count))
            live.start()
            started = time.perf_counter()
            client.send_user_message("bench", f"{args.words} {args.interval}")
            live.join(300)
            live_seconds = time.perf_counter() - started
            created = {
                token: event_time for token, event_time in _created_times(client, "bench", count[0])
            }
            latencies = [
                (stamps[token] - created[token]) * 1000 for token in stamps if token in created
            ]
            replays: list[list[int]] = [[0] for _ in range(args.readers)]
            readers = [
                threading.Thread(target=_follow, args=(base, "bench", {}, replays[i]))
                for i in range(args.readers)
            ]
            replay_start = time.perf_counter()
            for reader in readers:
                reader.start()
            for reader in readers:
                reader.join(300)
            replay_seconds = time.perf_counter() - replay_start
        finally:
            web.should_exit = True
            thread.join(30)
            worker.stop()
            client.close()
            server.stop()
    total = sum(r[0] for r in replays)
    print(f"live turn: {count[0]} events in {live_seconds:.2f} s ({count[0] / live_seconds:.0f}/s)")
    print(
        f"commit-to-parse latency (ms, {len(latencies)} events): "
        f"median {statistics.median(latencies):.1f}, p95 {_percentile(latencies, 0.95):.1f}, "
        f"p99 {_percentile(latencies, 0.99):.1f}, max {max(latencies):.1f}"
    )
    print(
        f"replay: {args.readers} readers x {total // args.readers} events in "
        f"{replay_seconds:.2f} s ({total / replay_seconds:.0f} events/s in total)"
    )
    return 0


def _created_times(client: AgentSessionClient, session: str, count: int) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    token = ""
    for _ in range(count):
        message = client.read_event(session, token)
        token = message.resume_token
        found.append((token, message.created_time.astimezone(UTC).timestamp()))
    return found


if __name__ == "__main__":
    sys.exit(main())
