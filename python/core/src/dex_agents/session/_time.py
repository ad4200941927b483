"""Times as the wire format writes them (UTC, millisecond precision), and Timer lengths."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

__all__ = ["ceil_seconds", "utc_from", "utc_now"]


def utc_now() -> datetime:
    """Now in UTC, truncated to milliseconds (the codec writes `...123Z`)."""
    now = datetime.now(UTC)
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
