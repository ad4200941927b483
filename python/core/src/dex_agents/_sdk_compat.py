"""Every use of a dex-python-sdk private name, in one place, each checked against SDK 1.23.0.

The SDK offers no public way to do any of the things below; each use says why
it is worth the risk. `tests/test_sdk_compat.py` fails loudly when the installed
SDK is another version or these names changed shape, so an SDK upgrade revisits
this module first. Without the names, each falls back to the SDK's own
behaviour: the output watch returns at once, the lookup stays uncached, and a
Worker keeps the SDK's hydrator.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from dex import AsyncContext
from dex._async_value_hydrator import AsyncValueHydrator
from dex.dexpb import dex_pb2 as pb

__all__ = [
    "CHECKED_SDK_VERSION",
    "ChannelKeyedHydrator",
    "cache_pull_stream_sdk_version",
    "key_loaded_channel_messages_by_name",
    "step_output_queue",
]

CHECKED_SDK_VERSION = "1.23.0"
"""The dex-python-sdk version these private names were checked against."""


def step_output_queue(context: AsyncContext) -> asyncio.Queue[Any] | None:
    """The attempt's output queue, `context._output_emitter.queue`, or None.

    Why: a tool Step must know that tool_call_started and its heartbeat reached
    the Worker's transport before the tool runs (see `_output_drain`), and SDK
    1.23.0's `heartbeat()` and Stream writes return once the output is queued on
    this `asyncio.Queue` of `_AsyncStepOutputEmitter`, which
    `AsyncWorkerDispatcher._drain_outputs` takes from with `get_nowait`/`get`.
    """
    queue = getattr(getattr(context, "_output_emitter", None), "queue", None)
    return queue if isinstance(queue, asyncio.Queue) else None


def cache_pull_stream_sdk_version() -> None:
    """Look the SDK's own version up once per process instead of once per pull stream.

    Why: SDK 1.23.0's pull Worker (`dex._pull_worker`) opens a new stream whenever
    one takes a task, and each registers with `sdk_version()`, an
    `importlib.metadata.version` lookup that scans the installed distributions
    (about 1.5 ms of event-loop time, on every Step's path). The installed
    version cannot change while the process runs, so the module's name is
    replaced by a cached copy.
    """
    try:
        pull_worker = importlib.import_module("dex._pull_worker")
    except ImportError:  # a later SDK without this module
        return
    lookup = getattr(pull_worker, "sdk_version", None)
    if callable(lookup) and not hasattr(lookup, "cache_info"):
        setattr(pull_worker, "sdk_version", functools.cache(lookup))  # noqa: B010


_LoadingRequest = TypeVar(
    "_LoadingRequest",
    pb.InvokeWaitForMethodRequest,
    pb.InvokeExecuteMethodRequest,
    pb.InvokeWorkerRPCRequest,
)


class ChannelKeyedHydrator(AsyncValueHydrator):
    """The SDK's hydrator, except that loaded channel messages keep their own values.

    Why: SDK 1.23.0 gathers the values of `loaded_channel_messages` by iterating
    the request's map, then writes them back by iterating the map of a
    `CopyFrom` copy. upb may order the two maps differently (its hash seed is
    per process: about 1 process in 60 for two channels, most for 32), and then
    each channel gets another channel's values under its own message ids. A
    session RPC that loads both QueuedUserMessages and SteeredUserMessages saw
    the queued text under the steered id. Here the map is taken out before the
    SDK hydrates the rest, and put back by channel name and position.
    """

    async def wait_for_request(
        self, request: pb.InvokeWaitForMethodRequest
    ) -> pb.InvokeWaitForMethodRequest:
        return await self._by_name(request, super().wait_for_request)

    async def execute_request(
        self, request: pb.InvokeExecuteMethodRequest
    ) -> pb.InvokeExecuteMethodRequest:
        return await self._by_name(request, super().execute_request)

    async def rpc_request(self, request: pb.InvokeWorkerRPCRequest) -> pb.InvokeWorkerRPCRequest:
        return await self._by_name(request, super().rpc_request)

    async def _by_name(
        self,
        request: _LoadingRequest,
        hydrate_rest: Callable[[_LoadingRequest], Awaitable[_LoadingRequest]],
    ) -> _LoadingRequest:
        channels = request.loaded_channel_messages
        if len(channels) < 2:  # one channel has one order
            return await hydrate_rest(request)
        without_channels = type(request)()
        without_channels.CopyFrom(request)
        without_channels.ClearField("loaded_channel_messages")
        result = await hydrate_rest(without_channels)
        places = [
            (name, index)
            for name, channel in channels.items()
            for index in range(len(channel.messages))
        ]
        values = await self.hydrate_all(
            request.context.flow_id,
            [channels[name].messages[index].value for name, index in places],
        )
        loaded = result.loaded_channel_messages
        for name, channel in channels.items():
            loaded[name].CopyFrom(channel)
        for (name, index), value in zip(places, values, strict=True):
            loaded[name].messages[index].value.CopyFrom(value)
        return result


def key_loaded_channel_messages_by_name() -> None:
    """Have every AsyncWorker built from now on hydrate with `ChannelKeyedHydrator`.

    Why: SDK 1.23.0's `AsyncWorker.__init__` builds its dispatcher's hydrator
    from the module name `dex.async_worker.AsyncValueHydrator` and offers no
    option to pass another, so the module's name is replaced (once per process).
    """
    async_worker = importlib.import_module("dex.async_worker")
    if getattr(async_worker, "AsyncValueHydrator", None) is AsyncValueHydrator:
        setattr(async_worker, "AsyncValueHydrator", ChannelKeyedHydrator)  # noqa: B010
