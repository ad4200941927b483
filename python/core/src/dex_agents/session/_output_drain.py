"""Knowing when a Step attempt's queued outputs have been written to the Worker's stream.

SDK 1.23.0's `heartbeat()` and Stream writes return once their output is queued
on the attempt's private `asyncio.Queue` (`_AsyncStepOutputEmitter.queue`). The
SDK's drain loop (`AsyncWorkerDispatcher._drain_outputs`) takes one output off,
yields it to the Worker's transport, and asks the queue for the next one only
after the transport finished writing it: the pull stream awaits `call.write`, a
listening Worker's gRPC server awaits its response write. So the first request
for an output after the last one queued so far was taken means that every one
of them completed its gRPC write.

`OutputDrainWatch` wraps the queue's `put_nowait`, `get_nowait` and `get` on that
one queue instance to see those moments, which wakes the Step the moment the
write completed: no polling, and no extra frame to mark the spot. The queue is
an SDK-private name, reached through `dex_agents._sdk_compat`. The core README's "Known
limits" says what a completed write does and does not promise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, Self

from dex import AsyncContext

from dex_agents._closing import Closing
from dex_agents._sdk_compat import step_output_queue

__all__ = ["OutputDrainWatch"]

_WRAPPED = ("put_nowait", "get_nowait", "get")


class OutputDrainWatch(Closing):
    """Use as `with OutputDrainWatch(context) as watch:` before queuing the outputs,
    then `await watch.written()`. On a context without the SDK's output queue
    (not an SDK async Step context) `written()` returns at once.
    """

    def __init__(self, context: AsyncContext) -> None:
        self._queue = step_output_queue(context)
        self._queued = 0  # outputs waiting at entry plus those put since
        self._taken = 0  # outputs taken off since entry
        self._requested_after = -1  # the most takes that a later request followed
        self._target = 0
        self._waiter: asyncio.Future[None] | None = None

    def __enter__(self) -> Self:
        queue = self._queue
        if queue is None:
            return self
        self._queued = queue.qsize()
        put_nowait, get_nowait, get = queue.put_nowait, queue.get_nowait, queue.get

        def watched_put_nowait(item: Any) -> None:
            put_nowait(item)
            self._queued += 1

        def watched_get_nowait() -> Any:
            self._on_request()
            item = get_nowait()
            self._taken += 1
            return item

        def watched_get() -> Coroutine[Any, Any, Any]:
            self._on_request()
            return get()

        replacements: tuple[Callable[..., Any], ...] = (
            watched_put_nowait,
            watched_get_nowait,
            watched_get,
        )
        for name, replacement in zip(_WRAPPED, replacements, strict=True):
            setattr(queue, name, replacement)  # shadows the class method on this instance
        return self

    def close(self) -> None:
        """Stops watching: the queue gets its own methods back."""
        queue = self._queue
        if queue is None:
            return
        for name in _WRAPPED:
            vars(queue).pop(name, None)

    def _on_request(self) -> None:
        self._requested_after = max(self._requested_after, self._taken)
        if self._waiter is not None and not self._waiter.done() and self._is_written():
            self._waiter.set_result(None)

    def _is_written(self) -> bool:
        return self._requested_after >= self._target

    async def written(self) -> None:
        """Returns once every output waiting at entry or queued since finished its write.

        With none of those it returns at once: an output the drain took before
        entry cannot be seen from here.
        """
        self._target = self._queued
        if self._queue is None or self._target == 0 or self._is_written():
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None
