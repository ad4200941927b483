"""dexlite step benchmark: transitions per second and publish-to-Execute latency.

Starts a dexlite child process on a free port with a fresh SQLite file and one
pull-mode SDK Worker in this process, then prints:

* sequential Step transitions per second for a Flow that loops
  WaitFor-on-channel -> Execute -> next Step (messages queued up front);
* median and p99 latency from an RPC that publishes to the channel until the
  Execute that consumes it starts.

Run: ``python python/dexlite/bench/bench_steps.py [--steps N] [--samples N] [--sync full|normal]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

_SRC = Path(__file__).resolve().parent.parent / "src"
if str(_SRC) not in sys.path:
    sys.path.insert(0, str(_SRC))

import dex  # noqa: E402 - after the sys.path setup above
import grpc  # noqa: E402
from dexlite.testing import DexliteProcess, free_port  # noqa: E402

tick = dex.Channel("tick", int)
EXECUTED: dict[int, float] = {}
EXECUTED_EVENT = threading.Condition()


class Loop(dex.Step[int]):
    def wait_for(self, context: dex.Context, input: int) -> dex.Wait:
        return dex.Wait.until(tick.for_one())

    def execute(self, context: dex.Context, input: int) -> dex.StepDecision:
        (value,) = tick.results(context)
        with EXECUTED_EVENT:
            EXECUTED[value] = time.perf_counter()
            EXECUTED_EVENT.notify_all()
        if input <= 1:
            return dex.graceful_complete(value)
        return dex.go_to(Loop, input - 1)


class LoopFlow(dex.Flow[int]):
    def get_flow_type(self) -> str:
        return "BenchLoop"

    def get_steps(self) -> dex.StepList[int]:
        return dex.StepList.start_step(Loop())

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(tick)

    @dex.rpc
    def fill(self, context: dex.Context, count: int) -> dex.RPCResult[int]:
        for i in range(count):
            tick.publish(context, i)
        return dex.RPCResult(count)

    @dex.rpc
    def send(self, context: dex.Context, value: int) -> dex.RPCResult[int]:
        tick.publish(context, value)
        return dex.RPCResult(value)


FLOW = LoopFlow()
REGISTRY = dex.Registry((FLOW,))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--sync", choices=("full", "normal"), default="full")
    parser.add_argument("--mode", choices=("pull", "listen"), default="pull")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = DexliteProcess(
            f"{tmp}/bench.sqlite", "--sync", args.sync, "--log-level", "WARNING"
        ).start()
        address = server.address
        cache = dex.open_blob_cache(
            dex.BlobCacheConfig(directory=f"{tmp}/cache", max_bytes=1 << 24)
        )
        worker = dex.Worker(
            REGISTRY,
            cache,
            dex.WorkerOptions(
                server_address=address,
                pull=dex.PullWorkerOptions(max_concurrent_tasks=4, idle_streams_per_queue=2),
            )
            if args.mode == "pull"
            else dex.WorkerOptions(server_address=address, bind_address=f"127.0.0.1:{free_port()}"),
        )
        try:
            thread = threading.Thread(target=worker.start, daemon=True)
            thread.start()
            if args.mode == "pull":
                worker.wait_pull_registered(timeout=30)
            else:
                with grpc.insecure_channel(worker.worker_target.address) as channel:
                    grpc.channel_ready_future(channel).result(timeout=30)
            client = dex.Client(
                REGISTRY,
                cache,
                dex.ClientOptions(server_address=address, worker_target=worker.worker_target),
            )
            # Throughput: all messages queued first, then N sequential Step transitions.
            client.start_flow(FLOW, "throughput", args.steps)
            started = time.perf_counter()
            client.invoke_rpc(FLOW.fill, "throughput", args.steps)
            client.wait_for_flow("throughput")
            elapsed = time.perf_counter() - started
            print(
                f"sequential step transitions: {args.steps} in {elapsed:.2f}s"
                f" = {args.steps / elapsed:.0f}/s"
            )
            # Latency: one RPC publish at a time, measured until the consuming Execute starts.
            EXECUTED.clear()
            client.start_flow(FLOW, "latency", args.samples)
            latencies = []
            after_reply = []
            for i in range(args.samples):
                sent = time.perf_counter()
                client.invoke_rpc(FLOW.send, "latency", i)
                replied = time.perf_counter()
                with EXECUTED_EVENT:
                    EXECUTED_EVENT.wait_for(lambda i=i: i in EXECUTED, timeout=30)  # type: ignore[misc]
                latencies.append((EXECUTED[i] - sent) * 1000)
                after_reply.append((EXECUTED[i] - replied) * 1000)
            client.wait_for_flow("latency")
            for label, values in (
                ("RPC call -> Execute start", latencies),
                ("RPC reply -> Execute start", after_reply),
            ):
                values.sort()
                p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
                print(
                    f"{label} over {len(values)} samples:"
                    f" median {statistics.median(values):.2f} ms, p99 {p99:.2f} ms"
                )
            print(f"worker reserve declines: {worker.pull_reserved_rpc_declines}")
            client.close()
        finally:
            worker.stop()
            cache.close()
            server.stop()


if __name__ == "__main__":
    main()
