"""Every use of a dex-python-sdk private name, in one place, each checked against SDK 1.23.0.

The SDK offers no public way to do either thing below; each use says why it is
worth the risk. `tests/test_sdk_compat.py` fails loudly when the installed SDK
is another version or these names changed shape, so an SDK upgrade revisits
this module first. Without the names, both fall back to the SDK's own
behaviour: the output watch returns at once, and the lookup stays uncached.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
from typing import Any

from dex import AsyncContext

__all__ = ["CHECKED_SDK_VERSION", "cache_pull_stream_sdk_version", "step_output_queue"]

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
