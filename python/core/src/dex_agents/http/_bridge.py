"""A blocking producer on a thread feeding an async consumer, with bounded read-ahead.

The Dex Client is synchronous, so each stream reads its events on a thread of the
app's pool. The producer takes a slot before handing an item over and the consumer
returns it once the item left, so at most `queue_size` items wait per stream and a
consumer that stops taking items stops the producer too.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor
from typing import Generic, TypeVar

__all__ = ["Emit", "StreamIdle", "bridged"]

T = TypeVar("T")

Emit = Callable[[T], bool]
"""Hands one item to the consumer; false once the consumer has gone (stop producing)."""

_SLOT_WAIT_SECONDS = 0.25


class StreamIdle(Exception):
    """Nothing arrived within the idle timeout."""


class _End(Generic[T]):
    def __init__(self, error: BaseException | None) -> None:
        self.error = error


async def bridged(
    produce: Callable[[Emit[T], threading.Event], None],
    *,
    executor: Executor,
    queue_size: int,
    idle_timeout: float,
) -> AsyncIterator[T]:
    """Yields what `produce(emit, stopped)` emits on a thread, until it returns or raises.

    `stopped` is set once the consumer has gone; a producer blocked in a long poll
    sees it when the poll returns. Raises StreamIdle after `idle_timeout` seconds
    without an item, and re-raises what the producer raised.
    """
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[T | _End[T]] = asyncio.Queue()
    slots = threading.Semaphore(queue_size)
    stopped = threading.Event()

    def hand_over(item: T | _End[T]) -> bool:
        try:
            loop.call_soon_threadsafe(items.put_nowait, item)
        except RuntimeError:  # the loop has closed: nobody is listening
            stopped.set()
            return False
        return True

    def emit(item: T) -> bool:
        while not stopped.is_set():
            if slots.acquire(timeout=_SLOT_WAIT_SECONDS):
                return hand_over(item)
        return False

    def run() -> None:
        error: BaseException | None = None
        try:
            produce(emit, stopped)
        except BaseException as raised:  # handed to the consumer below
            error = raised
        hand_over(_End(error))

    future = loop.run_in_executor(executor, run)
    try:
        while True:
            try:
                item = await asyncio.wait_for(items.get(), idle_timeout)
            except TimeoutError:
                raise StreamIdle from None
            if isinstance(item, _End):
                if item.error is not None:
                    raise item.error
                return
            slots.release()
            yield item
    finally:
        stopped.set()
        # The thread finishes its current read on its own; nobody waits for it here.
        future.add_done_callback(lambda done: done.exception())
