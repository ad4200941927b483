"""dexlite and Worker child processes that tests start, SIGKILL and restart.

Each child runs in its own process group (`start_new_session=True`), so a
SIGKILL takes down the child alone, as a crashed machine would.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import grpc
from dex.dexpb import dex_pb2_grpc
from google.protobuf import empty_pb2

__all__ = ["DexliteProcess", "WorkerProcess", "child_env", "free_port", "wait_until"]

T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def child_env() -> dict[str, str]:
    """This interpreter's import path, so children import the same packages."""
    env = dict(os.environ)
    parts = [p for p in sys.path if p]
    existing = env.get("PYTHONPATH", "")
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*parts, *existing.split(os.pathsep)]))
    return env


def wait_until(
    check: Callable[[], T | None], *, timeout: float = 30.0, what: str = "a condition"
) -> T:
    """Polls `check` until it returns something truthy, or fails after `timeout` seconds."""
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


def _wait_healthy(address: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"dexlite exited with {proc.returncode} before it served")
            try:
                stub.HealthCheck(empty_pb2.Empty(), timeout=1.0)
                return
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"dexlite at {address} did not become healthy") from None
                time.sleep(0.05)


class _ChildProcess:
    """A child in its own process group: SIGKILL takes it down alone."""

    proc: subprocess.Popen[bytes] | None
    stop_timeout: float

    def kill(self) -> None:
        """SIGKILL the child's process group, then reap it."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL if the child has not exited after `stop_timeout`."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(self.stop_timeout)
        except subprocess.TimeoutExpired:
            self.kill()


class DexliteProcess(_ChildProcess):
    """A dexlite child on a free loopback port; `restart` keeps port and database."""

    def __init__(self, db_path: str | Path, *extra_args: str) -> None:
        self.db_path = str(db_path)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra_args = extra_args
        self.log_path = self.db_path + ".log"
        self.proc = None
        self.stop_timeout = 15.0

    def start(self) -> DexliteProcess:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "dexlite",
                    "serve",
                    "--listen",
                    self.address,
                    "--db",
                    self.db_path,
                    *self.extra_args,
                ],
                env=child_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _wait_healthy(self.address, self.proc)
        return self

    def restart(self) -> DexliteProcess:
        self.stop()
        return self.start()


class WorkerProcess(_ChildProcess):
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
            self.kill()
            raise RuntimeError(f"the Worker did not start (see {self.log_path}): {line!r}")
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


def write_json(path: str | Path, data: object) -> None:
    Path(path).write_text(json.dumps(data), encoding="utf-8")
