"""Times as the wire format writes them (UTC, millisecond precision), and Timer lengths."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["ceil_seconds", "set_clock", "utc_from", "utc_now"]


def _system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class _Clock:
    read: Callable[[], datetime] = _system_clock


_CLOCK = _Clock()


def set_clock(clock: Callable[[], datetime] | None) -> None:
    """Replaces the session's wall clock in this process (None: the system clock).

    Deadlines (approvals, questions, durable waits) are checked against this clock
    in the Worker, so a test can let hours pass without waiting for them:
    dex_agents_testing's file clock installs itself here. The clock must return
    aware datetimes.
    """
    _CLOCK.read = _system_clock if clock is None else clock


def utc_now() -> datetime:
    """Now in UTC, truncated to milliseconds (the codec writes `...123Z`)."""
    now = _CLOCK.read().astimezone(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


def utc_from(value: datetime | None) -> datetime | None:
    """A stored time as an aware UTC datetime."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def ceil_seconds(until: datetime, now: datetime) -> timedelta:
    """Whole seconds from now until `until`, rounded up (Dex Timers take whole seconds)."""
    remaining = (until - now).total_seconds()
    return timedelta(seconds=max(0, math.ceil(remaining)))
