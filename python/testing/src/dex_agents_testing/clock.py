"""A wall clock shared by the test and its Worker processes: real time plus a file's offset.

Approval, question and wait deadlines are checked against the session's clock in
the Worker that runs the Step or the RPC. A test that must let hours pass writes
the offset (seconds) to a file; every Worker that installed the clock from that
file reads it on each tick, so a restarted Worker keeps the same time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from dex_agents.session._time import set_clock

__all__ = ["FileClock"]


class FileClock:
    """`now()` is the system time plus the seconds written in `path` (none: zero)."""

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)

    def offset(self) -> timedelta:
        try:
            text = self._path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return timedelta(0)
        try:
            return timedelta(seconds=float(text)) if text else timedelta(0)
        except ValueError:
            raise ValueError(f"clock file {self._path} holds {text!r}, not seconds") from None

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset()

    def advance(self, by: timedelta) -> None:
        """Moves every process's clock on by `by` (written atomically)."""
        written = self.offset() + by
        scratch = self._path.with_name(self._path.name + ".tmp")
        scratch.write_text(f"{written.total_seconds()}\n", encoding="utf-8")
        scratch.replace(self._path)

    def install(self) -> None:
        """Makes this clock the session clock of the current process."""
        set_clock(self.now)
