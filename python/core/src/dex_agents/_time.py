"""Times as the wire format writes them: UTC, millisecond precision."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utc_now"]


def utc_now() -> datetime:
    """Now in UTC, truncated to milliseconds (the codec writes `...123Z`)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)
