"""`dexlite serve` stops on SIGTERM or SIGINT, whichever of its threads the kernel picks.

A process-directed signal goes to any thread that does not block it. When the
server caught SIGTERM with a Python handler, a delivery to a gRPC or engine
thread left the main thread asleep in a lock, and the server ignored the signal
until its parent killed it (a test harness after 15 s, an operator never). The
server now blocks both signals in every thread and takes them in the main
thread's sigwait; these tests pin that mask, and a stop that ends cleanly.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from dexlite.testing import DexliteProcess

pytestmark = pytest.mark.integration


def _blocked_signals(status: str) -> set[int]:
    """The signal numbers in a /proc status file's SigBlk mask."""
    mask = next(
        int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigBlk:")
    )
    return {number for number in range(1, 65) if mask & (1 << (number - 1))}


def test_every_thread_of_the_server_leaves_the_stop_signals_to_the_main_thread(
    tmp_path: Path,
) -> None:
    with DexliteProcess(tmp_path / "mask.sqlite") as server:
        assert server.proc is not None
        # The main thread is left out: it shows the two signals unblocked while it
        # sleeps in sigwait, which is how sigwait takes them.
        main = str(server.proc.pid)
        others = [t for t in Path(f"/proc/{main}/task").iterdir() if t.name != main]
        assert others, "dexlite serves from threads besides the main one"
        for task in others:
            blocked = _blocked_signals((task / "status").read_text())
            assert {signal.SIGTERM, signal.SIGINT} <= blocked, f"thread {task.name}"


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_server_cleanly(tmp_path: Path, stop_signal: signal.Signals) -> None:
    server = DexliteProcess(tmp_path / "stop.sqlite").start()
    assert server.proc is not None
    server.proc.send_signal(stop_signal)
    assert server.proc.wait(server.stop_timeout) == 0
    assert Path(server.log_path).read_text().rstrip().endswith("dexlite stopped")
