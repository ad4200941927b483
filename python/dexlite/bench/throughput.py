"""dexlite at scale: transitions/s with concurrent Flows and several Worker processes.

Every Flow is a chain of empty Steps (no wait_for, so one Execute task per
Step). One dexlite child (``instrumented_dexlite.py``, which times its SQLite
COMMITs) and K Worker child processes run each configuration; the client
starts N Flows at once and waits for all of them. For each configuration it
prints:

* transitions/s (Steps completed over the wall time from the first start to
  the last completion) and, for one Flow, the end-to-end time of an empty Step;
* dexlite's CPU per transition and the Workers' CPU per task (the SDK's Worker
  side alone: gRPC, frames, an empty handler), read from /proc;
* transactions per transition, writer statements per transaction, and the
  COMMIT median and p99 next to the disk's fsync floor measured in the same
  directory just before.

Run: ``bazel run //python/dexlite:throughput_bench`` or
``.venv/bin/python python/dexlite/bench/throughput.py [--steps N] [--grid N:K,...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_SRC = Path(__file__).resolve().parent.parent / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

import dex  # noqa: E402 - after the sys.path setup above
import grpc  # noqa: E402
from dexlite.testing import DexliteProcess, child_env, free_port  # noqa: E402

_INSTRUMENTED = Path(__file__).resolve().parent / "instrumented_dexlite.py"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Empty(dex.Step[int]):
    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        if input <= 1:
            return dex.graceful_complete(0)
        return dex.go_to(Empty, input - 1)


class ChainFlow(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "BenchChain"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(Empty())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of()


FLOW = ChainFlow()
REGISTRY = dex.Registry((FLOW,))


def cpu_seconds(pid: int) -> float:
    """User plus system CPU of one process, all its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def fsync_floor(directory: str, samples: int = 200) -> list[float]:
    """Seconds of one 4 KiB write plus fdatasync, the least a durable commit costs."""
    path = os.path.join(directory, "fsync-probe")
    block = b"\0" * 4096
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        times = []
        for i in range(samples):
            started = time.perf_counter()
            os.pwrite(fd, block, (i % 16) * 4096)
            os.fdatasync(fd)
            times.append(time.perf_counter() - started)
        return times
    finally:
        os.close(fd)
        os.unlink(path)


# --- the Worker child ---------------------------------------------------------


def serve_worker(address: str, mode: str, cache_dir: str) -> None:
    """Runs one SDK Worker until SIGTERM; prints its target once it serves."""
    cache = dex.open_blob_cache(dex.BlobCacheConfig(directory=cache_dir, max_bytes=1 << 24))
    if mode == "pull":
        options = dex.WorkerOptions(
            server_address=address,
            pull=dex.PullWorkerOptions(max_concurrent_tasks=8, idle_streams_per_queue=2),
        )
    else:
        options = dex.WorkerOptions(server_address=address, bind_address=f"127.0.0.1:{free_port()}")
    worker = dex.Worker(REGISTRY, cache, options)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stopped.set())
    thread = threading.Thread(target=worker.start, daemon=True)
    thread.start()
    if mode == "pull":
        worker.wait_pull_registered(timeout=30)
    else:
        with grpc.insecure_channel(worker.worker_target.address) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
    print(f"ready {worker.worker_target.address}", flush=True)
    stopped.wait()
    worker.stop()


@dataclass
class WorkerChild:
    proc: subprocess.Popen[str]
    target: dex.WorkerTarget


def start_worker(address: str, mode: str, cache_dir: str) -> WorkerChild:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve-worker", address, "--mode", mode, "--cache", cache_dir],
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if not line or line[0] != "ready":
        proc.kill()
        raise RuntimeError(f"Worker child did not start (exit {proc.wait()})")
    target = dex.WorkerTarget(pull=True) if mode == "pull" else dex.WorkerTarget(address=line[1])
    return WorkerChild(proc, target)


class InstrumentedDexlite(DexliteProcess):
    def command(self) -> list[str]:
        return [sys.executable, str(_INSTRUMENTED), *super().command()[3:]]


# --- one configuration --------------------------------------------------------


@dataclass
class Figures:
    flows: int
    workers: int
    transitions: int
    seconds: float
    server_cpu: float
    worker_cpu: float
    transactions: int
    statements: int
    commits: list[float]

    @property
    def per_second(self) -> float:
        return self.transitions / self.seconds


def run_configuration(
    tmp: str, mode: str, *, flows: int, workers: int, steps: int, sync: str
) -> Figures:
    directory = tempfile.mkdtemp(dir=tmp)
    stats_path = os.path.join(directory, "stats.json")
    os.environ["DEXLITE_BENCH_STATS"] = stats_path
    server = InstrumentedDexlite(
        os.path.join(directory, "bench.sqlite"), "--sync", sync, "--log-level", "WARNING"
    ).start()
    children: list[WorkerChild] = []
    clients: list[dex.Client] = []
    cache = dex.open_blob_cache(
        dex.BlobCacheConfig(directory=os.path.join(directory, "cache"), max_bytes=1 << 24)
    )
    try:
        for index in range(workers):
            children.append(
                start_worker(server.address, mode, os.path.join(directory, f"cache-{index}"))
            )
        # One client per Worker target: in listening mode a Flow runs where its start says.
        targets = children[:1] if mode == "pull" else children
        clients = [
            dex.Client(
                REGISTRY,
                cache,
                dex.ClientOptions(server_address=server.address, worker_target=child.target),
            )
            for child in targets
        ]
        assert server.proc is not None
        server_pid = server.proc.pid
        server_before = cpu_seconds(server_pid)
        workers_before = sum(cpu_seconds(child.proc.pid) for child in children)
        started = time.perf_counter()
        for index in range(flows):
            clients[index % len(clients)].start_flow(FLOW, f"chain-{index}", steps)
        for index in range(flows):
            clients[index % len(clients)].wait_for_flow(f"chain-{index}")
        seconds = time.perf_counter() - started
        server_cpu = cpu_seconds(server_pid) - server_before
        worker_cpu = sum(cpu_seconds(child.proc.pid) for child in children) - workers_before
    finally:
        for client in clients:
            client.close()
        for child in children:
            child.proc.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.proc.wait(15)
            except subprocess.TimeoutExpired:
                child.proc.kill()
                child.proc.wait()
        server.stop()
        cache.close()
    engine = json.loads(Path(stats_path).read_text())["bench.sqlite"]
    return Figures(
        flows=flows,
        workers=workers,
        transitions=flows * steps,
        seconds=seconds,
        server_cpu=server_cpu,
        worker_cpu=worker_cpu,
        transactions=engine["transactions"],
        statements=engine["statements"],
        commits=engine["commit_seconds"],
    )


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def parse_grid(text: str) -> list[tuple[int, int]]:
    grid = []
    for item in text.split(","):
        flows, _, workers = item.partition(":")
        if not flows.isdigit() or not workers.isdigit() or int(flows) < 1 or int(workers) < 1:
            raise argparse.ArgumentTypeError(f"grid entry {item!r} is not FLOWS:WORKERS")
        grid.append((int(flows), int(workers)))
    return grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mode", choices=("listen", "pull"), default="listen")
    parser.add_argument("--steps", type=int, default=400, help="transitions per configuration")
    parser.add_argument(
        "--grid",
        type=parse_grid,
        default=parse_grid("1:1,8:1,8:2,32:2,32:3"),
        help="FLOWS:WORKERS,... (concurrent Flows, Worker processes)",
    )
    parser.add_argument("--sync", choices=("full", "normal"), default="full")
    parser.add_argument("--serve-worker", metavar="ADDRESS", help=argparse.SUPPRESS)
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_worker:
        serve_worker(args.serve_worker, args.mode, args.cache)
        return
    with tempfile.TemporaryDirectory(prefix="dexlite-throughput-") as tmp:
        floor = fsync_floor(tmp)
        floor_ms = statistics.median(floor) * 1000
        print(
            f"fsync floor (4 KiB write + fdatasync, {len(floor)} samples): median"
            f" {floor_ms:.2f} ms, p99 {percentile(floor, 0.99) * 1000:.2f} ms"
        )
        print(
            f"mode {args.mode}, sync {args.sync}, {args.steps} transitions per configuration,"
            f" {os.cpu_count()} cores"
        )
        header = (
            "flows workers  transitions/s  step ms  dexlite CPU ms/tr  worker CPU ms/task"
            "  tx/tr  stmts/tx  commit med ms  p99 ms  med/floor"
        )
        print(header)
        for flows, workers in args.grid:
            steps = max(1, args.steps // flows)
            figures = run_configuration(
                tmp, args.mode, flows=flows, workers=workers, steps=steps, sync=args.sync
            )
            commits = figures.commits or [0.0]
            commit_ms = statistics.median(commits) * 1000
            # A lone chain's wall time per Step is the end-to-end cost of an empty Step.
            step_ms = figures.seconds / figures.transitions * 1000 * flows
            print(
                f"{flows:5d} {workers:7d}  {figures.per_second:13.0f}  {step_ms:7.2f}"
                f"  {figures.server_cpu / figures.transitions * 1000:17.2f}"
                f"  {figures.worker_cpu / figures.transitions * 1000:18.2f}"
                f"  {figures.transactions / figures.transitions:5.2f}"
                f"  {figures.statements / max(1, figures.transactions):8.1f}"
                f"  {commit_ms:13.2f}  {percentile(commits, 0.99) * 1000:6.2f}"
                f"  {commit_ms / floor_ms:9.1f}x"
            )
        print(
            "step ms: wall time per Step of one chain (for 1 flow, an empty Step end to end);"
            " tx and statements count the whole run (starts and completions included)"
        )


if __name__ == "__main__":
    main()
