"""dexlite and Worker child processes that tests start, SIGKILL and restart.

The dexlite side and `wait_until` come from :mod:`dexlite.testing`, re-exported
here. Each child runs in its own process group, so a SIGKILL takes down the
child alone, as a crashed machine would.
"""

from __future__ import annotations

import selectors
import subprocess
import sys
from pathlib import Path
from typing import IO

from dexlite.testing import ChildProcess, DexliteProcess, child_env, free_port, wait_until

__all__ = [
    "ChildProcess",
    "DexliteProcess",
    "WorkerProcess",
    "child_env",
    "free_port",
    "wait_until",
]


class WorkerProcess(ChildProcess):
    """A Worker child serving one scenario (`dex_agents_testing.worker_main`)."""

    def __init__(
        self,
        server_address: str,
        scenario_path: str | Path,
        *,
        listen_port: int | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        self.server_address = server_address
        self.scenario_path = str(scenario_path)
        self.listen_port = listen_port
        self.log_path = str(log_path or (self.scenario_path + ".worker.log"))
        self.proc = None
        # A Worker finishes its running Steps before it exits.
        self.stop_timeout = 40.0

    def start(self, timeout: float = 60.0) -> WorkerProcess:
        args = [
            sys.executable,
            "-m",
            "dex_agents_testing.worker_main",
            "--server",
            self.server_address,
            "--scenario",
            self.scenario_path,
        ]
        if self.listen_port is not None:
            args += ["--listen", f"127.0.0.1:{self.listen_port}"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                args,
                env=child_env(),
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        assert self.proc.stdout is not None
        line = _read_line(self.proc.stdout, timeout)
        if not line.startswith("ready"):
            exit_code = self.proc.poll()
            self.kill()
            if line:
                reason = f"it printed {line!r}"
            elif exit_code is not None:
                reason = f"it exited with code {exit_code} before printing ready"
            else:
                reason = f"it printed nothing for {timeout:g} s"
            raise RuntimeError(f"the Worker did not start (see {self.log_path}): {reason}")
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def restart(self) -> WorkerProcess:
        self.kill()
        return self.start()


def _read_line(stream: IO[bytes], timeout: float) -> str:
    """First line of a child's stdout, or "" when it stays silent for `timeout` seconds."""
    selector = selectors.DefaultSelector()
    selector.register(stream, selectors.EVENT_READ)
    try:
        if not selector.select(timeout):
            return ""
        return stream.readline().decode("utf-8", "replace")
    finally:
        selector.close()
