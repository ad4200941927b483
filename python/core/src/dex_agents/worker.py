"""Build and run a Worker for session Flows: pull mode by default, listening mode on request."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import tempfile
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
from dex import (
    AsyncWorker,
    BlobCache,
    BlobCacheConfig,
    Codec,
    Flow,
    PullWorkerOptions,
    Registry,
    WorkerOptions,
    WorkerTarget,
    open_blob_cache,
)

from dex_agents._sdk_compat import (
    cache_pull_stream_sdk_version,
    key_loaded_channel_messages_by_name,
)
from dex_agents.codecs import agent_codec_registry
from dex_agents.errors import UserError
from dex_agents.session import AgentSessionFlow
from dex_agents.tracing import TracingOptions

__all__ = [
    "DEFAULT_BLOB_CACHE_BYTES",
    "DEFAULT_MAX_CONCURRENT_TASKS",
    "AgentWorker",
    "agent_registry",
    "run_worker",
]

DEFAULT_BLOB_CACHE_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_CONCURRENT_TASKS = 32
"""Tool and approval Steps mostly wait on I/O; the SDK's CPU-count default would
leave a 2-core Worker one Step slot, serializing a response's parallel tool calls."""


def agent_registry(
    flows: Sequence[Flow[Any]], extra_codecs: Mapping[object, Codec[Any]] | None = None
) -> Registry:
    """`Registry(flows, agent_codec_registry(), allow_async_handlers=True)`."""
    return Registry(list(flows), agent_codec_registry(extra_codecs), allow_async_handlers=True)


class AgentWorker:
    """An AsyncWorker for session Flows with its blob cache.

    Pull mode (the default, which newer Dex servers require) polls Dex for
    tasks; `listen="host:port"` serves the WorkerService there instead.
    """

    def __init__(
        self,
        flows: Sequence[Flow[Any]] | Registry,
        *,
        server_address: str,
        listen: str | None = None,
        max_concurrent_tasks: int = DEFAULT_MAX_CONCURRENT_TASKS,
        blob_cache_dir: str | None = None,
        blob_cache_bytes: int = DEFAULT_BLOB_CACHE_BYTES,
        tracing: TracingOptions | None = None,
    ) -> None:
        if tracing is not None:
            _enable_tracing(flows, tracing)
        self.registry = flows if isinstance(flows, Registry) else agent_registry(flows)
        self._temp_dir = (
            None if blob_cache_dir else tempfile.TemporaryDirectory(prefix="dex-blobs-")
        )
        directory = blob_cache_dir or (self._temp_dir.name if self._temp_dir else "")
        self.blob_cache: BlobCache = open_blob_cache(
            BlobCacheConfig(directory=directory, max_bytes=blob_cache_bytes)
        )
        if listen is None:
            cache_pull_stream_sdk_version()
            options = WorkerOptions(
                server_address=server_address,
                pull=PullWorkerOptions(max_concurrent_tasks=max_concurrent_tasks),
            )
        else:
            options = WorkerOptions(server_address=server_address, bind_address=listen)
        key_loaded_channel_messages_by_name()
        self.worker = AsyncWorker(self.registry, self.blob_cache, options)

    @property
    def target(self) -> WorkerTarget:
        """What a Client advertises when it starts a session on this Worker."""
        return self.worker.worker_target

    async def run(self, ready: asyncio.Event | None = None) -> None:
        """Serve until `stop`; sets `ready` once Dex can hand this Worker tasks."""
        task = asyncio.create_task(self.worker.start())
        try:
            if ready is not None:
                if self.worker.options.pull is not None:
                    waiter = asyncio.create_task(self.worker.wait_pull_registered())
                    done, _ = await asyncio.wait(
                        {task, waiter}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if task in done:
                        waiter.cancel()
                        await task
                        return
                    await waiter
                else:
                    await self._wait_listening(task)
                ready.set()
            await task
        finally:
            self.close_cache()

    async def _wait_listening(self, task: asyncio.Task[None]) -> None:
        # start() binds the port before it serves; wait until the listener accepts.
        for _ in range(600):
            if task.done():
                await task
                return
            target = self.worker.worker_target.address
            async with grpc.aio.insecure_channel(target) as channel:
                try:
                    await asyncio.wait_for(channel.channel_ready(), timeout=0.5)
                    return
                except TimeoutError:
                    continue
        raise RuntimeError("the listening Worker did not start serving")

    async def stop(self) -> None:
        await self.worker.stop()

    def close_cache(self) -> None:
        with contextlib.suppress(Exception):
            self.blob_cache.close()
        if self._temp_dir is not None:
            self._temp_dir.cleanup()
            self._temp_dir = None


def _enable_tracing(flows: Sequence[Flow[Any]] | Registry, tracing: TracingOptions) -> None:
    """The Worker's tracing for every session Flow without options of its own."""
    if isinstance(flows, Registry):
        raise UserError("`tracing` needs the Flows themselves, not a Registry")
    for flow in flows:
        if isinstance(flow, AgentSessionFlow) and flow.tracing_options is None:
            flow.enable_tracing(tracing)


def run_worker(
    flows: Sequence[Flow[Any]],
    *,
    server_address: str,
    listen: str | None = None,
    max_concurrent_tasks: int = DEFAULT_MAX_CONCURRENT_TASKS,
    on_ready: Callable[[], None] | None = None,
    tracing: TracingOptions | None = None,
) -> None:
    """Run a Worker for `flows` in the foreground until SIGINT or SIGTERM.

    `tracing` turns on spans for the session Flows (see `TracingOptions`).
    `on_ready`, if given, is called (with no arguments) once the Worker serves.
    Objects that exist before the Worker starts (imports, Flows) are moved out of
    the garbage collector's view, so its full collections stay short.
    """
    gc.collect()
    gc.freeze()

    async def main() -> None:
        worker = AgentWorker(
            flows,
            server_address=server_address,
            listen=listen,
            max_concurrent_tasks=max_concurrent_tasks,
            tracing=tracing,
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, lambda: asyncio.ensure_future(worker.stop()))
        ready = asyncio.Event()
        runner = asyncio.create_task(worker.run(ready))
        ready_waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({runner, ready_waiter}, return_when=asyncio.FIRST_COMPLETED)
        if ready.is_set() and on_ready is not None:
            on_ready()
        ready_waiter.cancel()
        await runner

    asyncio.run(main())
