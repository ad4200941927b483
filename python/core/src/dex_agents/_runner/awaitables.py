"""Runner methods that may answer now or later.

The protocol's small methods (`build_user_message`, token estimates, cutoffs,
unfinished-turn messages) are plain functions for in-process runners. A runner
that must cross a process to answer (RemoteRunner) makes them coroutine
functions instead, so that waiting for the answer never blocks the Worker's
event loop. The session awaits whichever it gets.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TypeAlias, TypeVar, cast

__all__ = ["MaybeAwaitable", "resolved"]

T = TypeVar("T")

MaybeAwaitable: TypeAlias = T | Awaitable[T]


async def resolved(value: MaybeAwaitable[T]) -> T:
    """`value`, awaited first when a coroutine function returned it."""
    if inspect.isawaitable(value):
        return await cast(Awaitable[T], value)
    return value
