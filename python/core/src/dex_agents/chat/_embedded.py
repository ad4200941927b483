"""`--dexlite`: a dexlite child and one Worker child for the agent, owned by the chat.

The database lives in a data directory, so a chat started again on it resumes its
sessions; a lock keeps a second chat off the same files. Both children die with
the chat, however it dies (the kernel's parent-death signal for dexlite, the end of
its standard input for the Worker), so a restarted chat never finds a stale server
on its database. The Worker is restarted whenever it dies (a SIGKILL included).
dexlite runs as `python -m dexlite`, never imported: dex_agents does not depend on it.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib.util
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from dex_agents.chat._errors import ChatError
from dex_agents.chat._state import Output

__all__ = ["EmbeddedDex", "default_data_dir"]

_DEXLITE_READY = "dexlite ready on "
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the chat's thread that started it ends."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def default_data_dir() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "dex-agents" / "chat"


def _child_env() -> dict[str, str]:
    """This environment, with an import path that finds what this process imports."""
    env = dict(os.environ)
    parts = [*sys.path, *env.get("PYTHONPATH", "").split(os.pathsep)]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(p for p in parts if p))
    return env


def _describe_exit(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exited with {code}"


class EmbeddedDex:
    def __init__(self, data_dir: Path, agent_spec: str) -> None:
        self.data_dir = data_dir
        self.agent_spec = agent_spec
        self.address = ""
        self._server: subprocess.Popen[bytes] | None = None
        self._lock: IO[str] | None = None
        self._worker: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        if importlib.util.find_spec("dexlite") is None:
            raise ChatError("--dexlite needs the dexlite package (pip install ./python/dexlite)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.data_dir / "chat.lock", "w")  # noqa: SIM115 - held until stop
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            other = (
                (self.data_dir / "dexlite.address").read_text().strip()
                if (self.data_dir / "dexlite.address").exists()
                else "?"
            )
            raise ChatError(
                f"another dex-agents chat uses {self.data_dir}; attach to it with --dex {other}, "
                f"or pass another --data-dir"
            ) from None
        self.address = self._start_dexlite()
        (self.data_dir / "dexlite.address").write_text(self.address + "\n")
        self.start_worker()
        return self.address

    def _start_dexlite(self, timeout: float = 60.0) -> str:
        log = open(self.data_dir / "dexlite.log", "ab")  # noqa: SIM115 - the child keeps it
        with log:
            server = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dexlite",
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--db",
                    str(self.data_dir / "dexlite.sqlite"),
                    "--log-level",
                    "WARNING",
                ],
                stdout=subprocess.PIPE,
                stderr=log,
                env=_child_env(),
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - only sets the death signal
            )
        self._server = server
        assert server.stdout is not None
        line = _first_line(server.stdout, timeout)
        if not line.startswith(_DEXLITE_READY):
            detail = line.strip() or f"see {self.data_dir / 'dexlite.log'}"
            raise ChatError(f"dexlite did not start on {self.data_dir}: {detail}")
        return line.removeprefix(_DEXLITE_READY).split()[0]

    def start_worker(self, timeout: float = 60.0) -> int:
        log = open(self.data_dir / "worker.log", "ab")  # noqa: SIM115 - the child keeps it
        with log:
            self._worker = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dex_agents.chat._worker_main",
                    "--server",
                    self.address,
                    "--agent",
                    self.agent_spec,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=_child_env(),
                start_new_session=True,
            )
        assert self._worker.stdout is not None
        line = _first_line(self._worker.stdout, timeout)
        if not line.startswith("ready"):
            self._kill_worker()
            detail = line.removeprefix("error ").strip() or f"see {self.data_dir / 'worker.log'}"
            raise ChatError(f"the Worker for {self.agent_spec} did not start: {detail}")
        (self.data_dir / "worker.pid").write_text(f"{self._worker.pid}\n")
        return self._worker.pid

    def check_worker(self) -> list[Output]:
        """Restarts a Worker that died; the lines say so."""
        worker = self._worker
        if worker is None or worker.poll() is None:
            return []
        how = _describe_exit(worker.returncode)
        try:
            pid = self.start_worker()
        except ChatError as error:
            return [Output(f"the Worker {how}; restarting it failed: {error}", "bold red")]
        return [
            Output(
                f"the Worker {how}; restarted it (pid {pid}): the session goes on from its "
                f"last commit",
                "bold yellow",
            )
        ]

    @property
    def worker_pid(self) -> int | None:
        return self._worker.pid if self._worker is not None else None

    def _kill_worker(self) -> None:
        worker = self._worker
        if worker is not None and worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(10)

    def stop(self) -> None:
        worker = self._worker
        if worker is not None and worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(5)
            except subprocess.TimeoutExpired:
                self._kill_worker()
        server = self._server
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(10)
        if self._lock is not None:
            self._lock.close()


def _first_line(stream: IO[bytes], timeout: float) -> str:
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if selector.select(max(0.0, deadline - time.monotonic())):
                return stream.readline().decode("utf-8", "replace")
        return ""
    finally:
        selector.close()
