"""`dexlite serve` with a measuring window opened by SIGUSR1 and closed by SIGUSR2.

Shared by the bench's instrumented launchers (`profiled_dexlite.py`,
`traced_dexlite.py`), which the bench signals around its measured turns.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

from dexlite._cli import main as dexlite_main

__all__ = ["serve_with_window"]


def serve_with_window(
    argv: list[str], *, opened: Callable[[], None], closed: Callable[[str], None]
) -> int:
    """Runs `dexlite argv[1:]`; SIGUSR1 calls `opened()`, SIGUSR2 `closed(argv[0])`."""
    path, rest = argv[0], argv[1:]

    def on_open(signum: int, frame: FrameType | None) -> None:
        opened()

    def on_close(signum: int, frame: FrameType | None) -> None:
        closed(path)

    signal.signal(signal.SIGUSR1, on_open)
    signal.signal(signal.SIGUSR2, on_close)
    # dexlite's own SIGTERM/SIGINT handlers are installed by its main().
    return dexlite_main(rest)
