"""A Worker on an event loop thread of its own, and a throwaway dexlite.

Examples and benchmarks that drive a session from plain synchronous code use
these; tests that kill Workers use `WorkerProcess` instead.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dex import Flow
from dex_agents import AgentWorker

from dex_agents_testing.processes import DexliteProcess

__all__ = ["dexlite_or", "worker_in_thread"]


@contextmanager
def dexlite_or(address: str | None, *, prefix: str = "dex-agents-") -> Iterator[str]:
    """Yields `address` when given, else the address of a fresh dexlite child process."""
    if address is not None:
        yield address
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as root:
        process = DexliteProcess(Path(root) / "dex.sqlite").start()
        try:
            yield process.address
        finally:
            process.stop()


@contextmanager
def worker_in_thread(
    flows: Sequence[Flow[Any]], address: str, *, start_timeout: float = 30.0
) -> Iterator[AgentWorker]:
    """Serves `flows` from a Worker on its own loop thread until the block ends.

    The Worker is built on that loop because its gRPC channels belong to the
    loop that creates them.
    """
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []
    holder: list[AgentWorker] = []

    async def serve() -> None:
        holder.append(AgentWorker(flows, server_address=address))
        started = asyncio.Event()
        task = asyncio.create_task(holder[0].run(started))
        waiter = asyncio.create_task(started.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        ready.set()
        waiter.cancel()
        await task

    def main() -> None:
        try:
            loop.run_until_complete(serve())
        except BaseException as error:  # handed to the caller's thread below
            failure.append(error)
            ready.set()

    thread = threading.Thread(target=main, name="dex-agents-worker", daemon=True)
    thread.start()
    if not ready.wait(start_timeout) or failure or not holder:
        raise RuntimeError(f"the Worker did not start: {failure or 'timed out'}")
    try:
        yield holder[0]
    finally:
        asyncio.run_coroutine_threadsafe(holder[0].stop(), loop).result(start_timeout)
        thread.join(start_timeout)
        loop.close()
