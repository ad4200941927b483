"""Whether the client of the RPC this thread serves is still waiting for its answer.

Long polls block a thread of the server's pool for up to ``max_wait_seconds``.
When the caller's deadline passes, the call is cancelled, or the server stops,
gRPC drops the answer; a poll that went on waiting would only hold its thread,
and enough abandoned polls would starve the pool and delay shutdown until the
longest of them timed out. The transport marks each call here and the waits of
the engine check it between their slices, without learning about gRPC.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from . import _errors

_active: ContextVar[Callable[[], bool] | None] = ContextVar("dexlite_caller_active", default=None)

WAIT_SLICE_SECONDS = 0.5
"""The longest a long poll sleeps before it looks at its caller again."""


@contextmanager
def serving(is_active: Callable[[], bool]) -> Iterator[None]:
    """Marks the current thread as serving a call whose liveness ``is_active`` reports."""
    token = _active.set(is_active)
    try:
        yield
    finally:
        _active.reset(token)


def check_waiting() -> None:
    """Ends a long poll whose caller no longer waits: its answer could not be delivered."""
    is_active = _active.get()
    if is_active is not None and not is_active():
        raise _errors.caller_gone()
