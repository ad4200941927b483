"""`dexlite serve` with cProfile in each of its threads, for the bench's `--profile-dexlite`.

    python profiled_dexlite.py STATS_FILE serve --listen ... --db ...

dexlite serves every RPC and pull stream on a thread of its gRPC pool, and
cProfile sees one thread only, so each thread that runs Python code after
SIGUSR1 gets its own profiler; SIGUSR2 merges them into STATS_FILE. Times are
each thread's CPU time (`time.thread_time`), so the many threads that wait on
long polls, pull streams or the database lock do not drown the figures; time
spent waiting for an fsync or the lock does not show.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import threading
import time
from types import FrameType
from typing import Any

from signal_window import serve_with_window

_profilers: list[cProfile.Profile] = []
_guard = threading.Lock()
_active = threading.Event()


def _thread_hook(frame: FrameType, event: str, arg: Any) -> None:
    """The first Python event of a thread once profiling is on hands it to cProfile."""
    if _active.is_set():
        profiler = cProfile.Profile(time.thread_time)
        with _guard:
            _profilers.append(profiler)
        profiler.enable()  # replaces this hook for the thread


def _write(path: str) -> None:
    _active.clear()
    with _guard:
        profilers = list(_profilers)
    if profilers:
        stats = pstats.Stats(profilers[0])
        for profiler in profilers[1:]:
            stats.add(profiler)
        stats.dump_stats(path + ".tmp")
        os.replace(path + ".tmp", path)


def main(argv: list[str]) -> int:
    threading.setprofile(_thread_hook)
    return serve_with_window(argv, opened=_active.set, closed=_write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
