"""An async Flow and Worker for the Dex Server fidelity tests (issue #15).

The SDK types Step methods as sync; async handlers override them with
``AsyncContext`` (hence the ``override`` ignores), as the session core does.

``Fidelity`` forks a long ``Runner`` and a ``Cutter`` that cancels it as its
sibling once it runs, then hands over to ``Closer``, which completes the flow
when the test publishes. The Runner reports what happened to it through
``RUNS`` so the test can tell "aborted" from "ran to its end".
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from concurrent.futures import Future
from datetime import timedelta

import dex
import grpc

from helpers.flows import inbox

RUNS: dict[str, str] = {}
"""Flow input key -> ``started``, ``cancelled`` or ``finished``."""
STARTED: dict[str, threading.Event] = {}
RELEASE: dict[str, threading.Event] = {}
LATE_RESULT = "late runner result"


def prepare(key: str) -> None:
    """Creates the events of one flow run before it starts."""
    STARTED[key] = threading.Event()
    RELEASE[key] = threading.Event()


class Runner(dex.Step[str]):
    """Runs until released; no heartbeat timeout unless the key asks for one."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(
            execute_retry=dex.RetryPolicy(maximum_attempts=1),
            heartbeat_timeout=timedelta(seconds=30),
        )

    async def execute(self, context: dex.AsyncContext, input: str) -> dex.StepDecision:  # type: ignore[override]
        RUNS[input] = "started"
        STARTED[input].set()
        try:
            await asyncio.to_thread(RELEASE[input].wait, 30)
        except asyncio.CancelledError:
            RUNS[input] = "cancelled"
            raise
        RUNS[input] = "finished"
        return dex.force_complete(LATE_RESULT)


class QuietRunner(Runner):
    """The same Runner without a heartbeat timeout (the Dex Server never aborts it)."""

    def get_step_options(self) -> dex.StepOptions | None:
        return dex.StepOptions(execute_retry=dex.RetryPolicy(maximum_attempts=1))


class Cutter(dex.Step[str]):
    async def execute(self, context: dex.AsyncContext, input: str) -> dex.StepDecision:  # type: ignore[override]
        await asyncio.to_thread(STARTED[input].wait, 30)
        return dex.go_to(Closer, input).with_canceling_sibling_steps(Runner, QuietRunner)


class Closer(dex.Step[str]):
    async def wait_for(self, context: dex.AsyncContext, input: str) -> dex.Wait:  # type: ignore[override]
        return dex.Wait.until(inbox.for_one())

    async def execute(self, context: dex.AsyncContext, input: str) -> dex.StepDecision:  # type: ignore[override]
        (message,) = inbox.results(context)
        return dex.graceful_complete(f"closed by {message}")


class Fork(dex.Step[str]):
    """Input ``quiet:<key>`` forks a QuietRunner, ``beating:<key>`` a Runner."""

    async def execute(self, context: dex.AsyncContext, input: str) -> dex.StepDecision:  # type: ignore[override]
        kind, key = input.split(":", 1)
        runner: type[Runner] = QuietRunner if kind == "quiet" else Runner
        return dex.go_to_many(dex.StepMovement.of(runner, key), dex.StepMovement.of(Cutter, key))


class Fidelity(dex.Flow[str]):
    def get_flow_type(self) -> str:
        return "Fidelity"

    def get_steps(self) -> dex.StepList[str]:
        return dex.StepList.start_step(Fork()).other_steps(
            Runner(), QuietRunner(), Cutter(), Closer()
        )

    def get_persistence_schema(self) -> dex.PersistenceSchema:
        return dex.PersistenceSchema.of(inbox)

    @dex.rpc
    def send(self, context: dex.Context, text: str) -> dex.RPCResult[int]:
        inbox.publish(context, text)
        return dex.RPCResult(0)


FIDELITY = Fidelity()
ASYNC_REGISTRY = dex.Registry((FIDELITY,), allow_async_handlers=True)


class AsyncThreadWorker:
    """A real SDK AsyncWorker (listening mode) on an event loop of its own thread."""

    def __init__(self, server_address: str, port: int) -> None:
        self._cache_dir = tempfile.TemporaryDirectory()
        self.cache = dex.open_blob_cache(
            dex.BlobCacheConfig(directory=self._cache_dir.name, max_bytes=1 << 24)
        )
        options = dex.WorkerOptions(server_address=server_address, bind_address=f"127.0.0.1:{port}")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

        async def build() -> dex.AsyncWorker:
            # Its grpc.aio channels belong to the loop they are created on.
            return dex.AsyncWorker(ASYNC_REGISTRY, self.cache, options)

        self.worker = asyncio.run_coroutine_threadsafe(build(), self._loop).result(30)
        self._served: Future[None] | None = None

    def start(self) -> AsyncThreadWorker:
        self._served = asyncio.run_coroutine_threadsafe(self.worker.start(), self._loop)
        with grpc.insecure_channel(self.worker.worker_target.address) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
        return self

    @property
    def target(self) -> dex.WorkerTarget:
        return self.worker.worker_target

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.worker.stop(), self._loop).result(30)
        if self._served is not None:
            self._served.result(30)
        asyncio.run_coroutine_threadsafe(self.worker.close(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self.cache.close()
        self._cache_dir.cleanup()
