"""dexlite as a child process, for tests of dexlite and of whatever runs on it.

A test that kills the server (SIGKILL, as a crashed machine would) needs it in
another process, in a process group of its own so the signal reaches it alone.
:class:`DexliteProcess` starts ``python -m dexlite serve`` on a free loopback
port, waits until it serves, and can stop, kill and restart it on the same port
and database files. Standard library only, so any test suite can use it.

Example::

    with DexliteProcess() as server:  # a fresh SQLite file in a temporary directory
        client = dex.Client(..., dex.ClientOptions(server_address=server.address))
        server.kill()
        server.restart()  # same port, same database
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Self, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from types import TracebackType

__all__ = [
    "ChildProcess",
    "DexliteProcess",
    "accepts_connections",
    "child_env",
    "database_dump",
    "free_port",
    "scratch_dir",
    "wait_until",
]

_READY = b"dexlite ready on "
"""What ``dexlite serve`` prints once its port is bound and its services run."""
_SOURCE_ROOT = str(Path(__file__).resolve().parent.parent)
_T = TypeVar("_T")


def free_port() -> int:
    """A loopback port that was free a moment ago (the OS may reuse it later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepts_connections(port: int) -> bool:
    """Whether something listens on the loopback `port` (for children with no ready line)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def database_dump(db_path: str | Path) -> str:
    """The SQL text of a SQLite database, read-only, to prove a call changed nothing."""
    with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as conn:
        return "\n".join(conn.iterdump())


def child_env() -> dict[str, str]:
    """This environment with an import path that finds what this interpreter imports.

    A child started from pytest or Bazel runfiles would otherwise not find dexlite,
    nor the packages and test helpers that this process put on ``sys.path``.
    """
    env = dict(os.environ)
    existing = env.get("PYTHONPATH", "").split(os.pathsep)
    parts = [_SOURCE_ROOT, *sys.path, *existing]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in parts if p))
    return env


def wait_until(
    check: Callable[[], _T | None], *, timeout: float = 30.0, what: str = "a condition"
) -> _T:
    """Polls ``check`` until it returns something truthy; tests synchronise on state, not sleeps."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)


@contextlib.contextmanager
def scratch_dir(keep_variable: str, prefix: str) -> Iterator[Path]:
    """A temporary directory, or the one environment variable ``keep_variable`` names.

    The named one is kept afterwards, so databases and logs survive for post-mortems.
    """
    keep = os.environ.get(keep_variable)
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        yield Path(keep)
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as root:
        yield Path(root)


class ChildProcess:
    """A child in its own process group (``start_new_session=True``)."""

    proc: subprocess.Popen[bytes] | None = None
    stop_timeout: float = 15.0
    """Seconds ``stop`` waits after SIGTERM before it kills."""

    dump_signal: signal.Signals | None = None
    """A signal that makes the child print its threads' stacks to its log, sent
    before ``stop`` kills a child that outlived ``stop_timeout``."""

    def _dump_stacks(self) -> None:
        if self.dump_signal is None or self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(self.dump_signal)
        # The child writes the stacks from its own signal handler; give it a moment
        # before the SIGKILL, and go on regardless if it wrote nothing.
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(1.0)

    def kill(self) -> None:
        """SIGKILL the child's process group, then reap it."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after ``stop_timeout``; the exit code (0 when never run)."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(self.stop_timeout)
            except subprocess.TimeoutExpired:
                self._dump_stacks()
                self.kill()
        return self.proc.returncode


class DexliteProcess(ChildProcess):
    """One dexlite child on a free loopback port; ``restart`` keeps port and files.

    ``db_path`` None means a fresh SQLite file in a temporary directory, removed
    on leaving the ``with`` block. ``extra_args`` go to ``dexlite serve`` as they
    are (``"--sync", "normal"``). Output goes to ``log_path``, beside the database.
    """

    def __init__(self, db_path: str | Path | None = None, *extra_args: str) -> None:
        self._owned_dir: str | None = None
        if db_path is None:
            self._owned_dir = tempfile.mkdtemp(prefix="dexlite-")
            db_path = Path(self._owned_dir) / "dexlite.sqlite"
        self.db_path = str(db_path)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra_args = extra_args
        self.log_path = self.db_path + ".log"

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "dexlite",
            "serve",
            "--listen",
            self.address,
            "--db",
            self.db_path,
            *self.extra_args,
        ]

    start_timeout: float = 30.0
    """Seconds ``start`` waits for the child to serve."""

    dump_signal = signal.SIGUSR1
    """``dexlite serve`` prints its threads' stacks on SIGUSR1."""

    def start(self) -> Self:
        """Starts the child and returns once it serves; raises if it exits or stalls."""
        log = Path(self.log_path)
        offset = log.stat().st_size if log.exists() else 0
        with log.open("ab") as output:
            self.proc = subprocess.Popen(
                self.command(),
                env=child_env(),
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait_ready(offset)
        return self

    def restart(self) -> Self:
        """Stops the child if it still runs, then starts it again on the same files."""
        self.stop()
        return self.start()

    def __enter__(self) -> Self:
        return self if self.proc is not None else self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
        if self._owned_dir is not None:
            shutil.rmtree(self._owned_dir, ignore_errors=True)

    def _wait_ready(self, offset: int) -> None:
        """Reads the child's new output until it says it serves."""
        assert self.proc is not None
        deadline = time.monotonic() + self.start_timeout
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            seen = b""
            while True:
                seen += log.read()
                if _READY in seen:
                    return
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"dexlite exited with {self.proc.returncode} before it served"
                        f" (see {self.log_path})"
                    )
                if time.monotonic() > deadline:
                    self.kill()
                    raise TimeoutError(f"dexlite at {self.address} did not start serving")
                time.sleep(0.02)
