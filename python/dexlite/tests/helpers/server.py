"""Start dexlite as a child process and wait for readiness through HealthCheck."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dexlite
import grpc
from dex.dexpb import dex_pb2_grpc
from google.protobuf import empty_pb2

SRC_DIR = str(Path(dexlite.__file__).resolve().parent.parent)
TESTS_DIR = str(Path(__file__).resolve().parent.parent)


def child_env() -> dict[str, str]:
    """PYTHONPATH that finds dexlite and the test helpers, under pytest or Bazel."""
    env = dict(os.environ)
    parts = [SRC_DIR, TESTS_DIR, *[p for p in sys.path if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(address: str, deadline_seconds: float = 20.0) -> None:
    deadline = time.monotonic() + deadline_seconds
    with grpc.insecure_channel(address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        while True:
            try:
                stub.HealthCheck(empty_pb2.Empty(), timeout=1.0)
                return
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"dexlite at {address} did not become healthy") from None
                time.sleep(0.05)


class DexliteProcess:
    """One dexlite child; ``restart`` reuses the port and database file."""

    def __init__(self, db_path: str, *extra: str) -> None:
        self.db_path = db_path
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.extra = extra
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = db_path + ".log"

    def start(self) -> DexliteProcess:
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the child for its lifetime
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
                *self.extra,
            ],
            env=child_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        wait_healthy(self.address)
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(15)

    def restart(self) -> None:
        self.start()
