"""Events per second through the HTTP app's SSE, and commit-to-parse latency.

A Stepwise session on dexlite (its Worker a child process) streams one answer of
`--words` text deltas, `--interval` seconds apart. Three readers follow the turn
as it runs and stamp each item as they parse it: a Python reader of the session's
plain SSE (`GET /sessions/{id}/events`, uvicorn on loopback, httpx2), and two
Node processes with @dex-agents/ui's own clients (typescript/ui/src/bench),
the browser-side parse: `streamAgentEvents` on the same SSE (each AgentEvent
decoded by @dex-agents/contracts), and the AI SDK UI message stream of the turn,
which that Node reader starts by POSTing the message as useChat does (each chunk
checked by ai's `uiMessageChunkSchema`). The latency of an event is the parse
stamp minus the time dexlite committed the event to its Stream (the Stream
message's created time, read afterwards through the Client; milliseconds, the
same clock); a UI chunk counts from the event its token names, first chunk per
event. Then `--readers` Python readers replay the finished turn at once, and one
Node reader each replays the SSE and the UI stream, which gives items per second
when no reader waits for the model. `--no-node` leaves the Node readers out.

    bazel run //python/core:http_sse_bench -- --words 2000 --readers 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
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
from dex_agents.http import HttpLimits, UiToken, create_app
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


class _NodeReader:
    """One run of typescript/ui/src/bench/sse_reader.ts: its stamped items and summary."""

    def __init__(self, script: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            ["node", str(script), *args], stdout=subprocess.PIPE, text=True
        )
        self.items: list[tuple[str, float]] = []
        self.count = 0
        self.seconds = 0.0
        self._connected = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            value = json.loads(line)
            if "connected" in value:
                self._connected.set()
            elif "token" in value:
                self.items.append((str(value["token"]), float(value["at"]) / 1000))
            elif "count" in value:
                self.count, self.seconds = int(value["count"]), float(value["seconds"])
        self._connected.set()  # at the end too, so a failed reader does not hang the run

    def wait_connected(self, timeout: float) -> None:
        if not self._connected.wait(timeout):
            raise RuntimeError("the Node reader did not connect")

    def finish(self, timeout: float) -> _NodeReader:
        code = self.process.wait(timeout)
        self._thread.join(timeout)
        if code != 0:
            raise RuntimeError(f"the Node reader exited with {code}")
        return self


def _checkout() -> Path:
    """The source tree: `bazel run`'s workspace, else the one holding this file."""
    configured = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    if configured:
        return Path(configured)
    for parent in Path(__file__).resolve().parents:
        if (parent / "typescript" / "ui").is_dir():
            return parent
    raise RuntimeError("typescript/ui not found: run from the checkout or with bazel run")


def _built_node_reader(work: Path) -> Path:
    """typescript/ui compiled out of the tree (as test_http_node.py does); the reader's path."""
    root = _checkout()
    package = work / "ui"
    shutil.copytree(
        root / "typescript" / "ui", package, ignore=shutil.ignore_patterns("node_modules", "dist")
    )
    stage = root / "tools" / "typescript" / "stage_node_modules.sh"
    modules = package / "node_modules"
    contracts = root / "typescript" / "contracts"
    subprocess.run(
        [str(stage), str(root / "node_modules"), str(modules), str(contracts)], check=True
    )
    tsc = modules / "typescript" / "bin" / "tsc"
    subprocess.run(["node", str(tsc), "-p", str(package / "tsconfig.json")], check=True)
    return package / "dist" / "bench" / "sse_reader.js"


def _latencies(stamps: dict[str, float], created: dict[str, float]) -> list[float]:
    return [(stamps[token] - created[token]) * 1000 for token in stamps if token in created]


def _ui_stamps(items: list[tuple[str, float]]) -> dict[str, float]:
    """The first chunk's stamp per Dex position its UI token names."""
    stamps: dict[str, float] = {}
    for token, at in items:
        stamps.setdefault(UiToken.decode(token).position, at)
    return stamps


def _latency_line(what: str, values: list[float]) -> str:
    return (
        f"{what} (ms, {len(values)} events): median {statistics.median(values):.1f}, "
        f"p95 {_percentile(values, 0.95):.1f}, p99 {_percentile(values, 0.99):.1f}, "
        f"max {max(values):.1f}"
    )


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=2000)
    parser.add_argument("--interval", type=float, default=0.002)
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--no-node", action="store_true", help="leave the Node readers out")
    args = parser.parse_args()
    node: dict[str, _NodeReader] = {}
    with tempfile.TemporaryDirectory(prefix="dex-http-bench-") as root:
        script = None if args.no_node else _built_node_reader(Path(root))
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
            text = f"{args.words} {args.interval}"
            if script is not None:
                node["events"] = _NodeReader(script, "events", base, "bench")
                node["events"].wait_connected(60)
            started = time.perf_counter()
            if script is not None:
                # The Node UI reader sends the message, as a page's useChat would.
                node["ui"] = _NodeReader(script, "ui", base, "bench", text)
            else:
                client.send_user_message("bench", text)
            live.join(300)
            live_seconds = time.perf_counter() - started
            for following in node.values():
                following.finish(300)
            created = {
                token: event_time for token, event_time in _created_times(client, "bench", count[0])
            }
            latencies = _latencies(stamps, created)
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
            if script is not None:
                node["events-replay"] = _NodeReader(script, "events", base, "bench").finish(300)
                node["ui-replay"] = _NodeReader(
                    script, "ui-replay", base, "bench", "turn-1"
                ).finish(300)
        finally:
            web.should_exit = True
            thread.join(30)
            worker.stop()
            client.close()
            server.stop()
    total = sum(r[0] for r in replays)
    print(f"live turn: {count[0]} events in {live_seconds:.2f} s ({count[0] / live_seconds:.0f}/s)")
    print(_latency_line("commit-to-parse latency, Python SSE reader", latencies))
    if node:
        events_stamps = dict(node["events"].items)
        print(
            _latency_line(
                "commit-to-parse latency, Node streamAgentEvents",
                _latencies(events_stamps, created),
            )
        )
        print(
            _latency_line(
                "commit-to-parse latency, Node UI message stream (first chunk per event)",
                _latencies(_ui_stamps(node["ui"].items), created),
            )
        )
    print(
        f"replay: {args.readers} Python readers x {total // args.readers} events in "
        f"{replay_seconds:.2f} s ({total / replay_seconds:.0f} events/s in total)"
    )
    for name, what in (("events-replay", "events"), ("ui-replay", "UI chunks")):
        if name in node:
            replayed = node[name]
            print(
                f"replay: 1 Node reader ({name}), {replayed.count} {what} in "
                f"{replayed.seconds:.2f} s ({replayed.count / replayed.seconds:.0f}/s)"
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
