"""The bounds every HTTP stream keeps, and the counter that enforces the stream limit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["HttpLimits", "StreamSlots"]


@dataclass(frozen=True, kw_only=True)
class HttpLimits:
    """What one app lets its streams hold, so a crowd of browsers cannot exhaust it.

    A stream reads the next AgentEvent only while its queue has room, and the queue
    empties only as fast as the browser reads, so a browser that stops reading stops
    the reads instead of growing a buffer; `send_timeout_seconds` then closes it.
    """

    max_streams: int = 256
    """Open SSE and UI streams at once; one more gets 503 with Retry-After."""
    queue_size: int = 64
    """Events (or UI chunks) read ahead of the browser, per stream."""
    idle_timeout_seconds: float = 300.0
    """A stream that delivered nothing for this long ends; the browser reconnects."""
    ping_seconds: float = 15.0
    """Interval of `: ping` comments, which keep proxies from closing a quiet stream."""
    send_timeout_seconds: float = 30.0
    """A write the browser does not take within this time closes the stream."""
    poll_seconds: int = 2
    """Long-poll of one Dex read in whole seconds (as Dex counts them); also how soon a
    closed stream frees its thread."""
    retry_ms: int = 1000
    """The `retry:` an EventSource waits before it reconnects."""

    def __post_init__(self) -> None:
        for name in ("max_streams", "queue_size", "retry_ms", "poll_seconds"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"HttpLimits.{name} must be a positive integer, got {value!r}")
        for name in (
            "idle_timeout_seconds",
            "ping_seconds",
            "send_timeout_seconds",
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"HttpLimits.{name} must be a positive number, got {value!r}")


class StreamSlots:
    """Counts open streams against `max_streams`; thread safe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> int:
        with self._lock:
            return self._open

    def try_acquire(self) -> Callable[[], None] | None:
        """A release function for a new slot (calling it twice frees one slot), or None."""
        with self._lock:
            if self._open >= self.limit:
                return None
            self._open += 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if not released.is_set():
                    released.set()
                    self._open -= 1

        return release
