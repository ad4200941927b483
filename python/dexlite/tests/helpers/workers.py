"""SDK Workers for tests: in-process threads, or a child process that can be SIGKILLed."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from typing import Literal

import dex
import grpc
from dexlite.testing import ChildProcess, child_env, free_port

from helpers.flows import REGISTRY

Mode = Literal["listen", "pull"]


class ThreadWorker:
    """A real SDK Worker running ``start()`` on a background thread."""

    def __init__(
        self,
        server_address: str,
        mode: Mode,
        port: int = 0,
        max_tasks: int = 4,
        registry: dex.Registry = REGISTRY,
    ) -> None:
        self._cache_dir = tempfile.TemporaryDirectory()
        self.cache = dex.open_blob_cache(
            dex.BlobCacheConfig(directory=self._cache_dir.name, max_bytes=1 << 24)
        )
        if mode == "pull":
            options = dex.WorkerOptions(
                server_address=server_address,
                pull=dex.PullWorkerOptions(
                    max_concurrent_tasks=max_tasks, idle_streams_per_queue=2
                ),
            )
        else:
            options = dex.WorkerOptions(
                server_address=server_address, bind_address=f"127.0.0.1:{port or free_port()}"
            )
        self.mode = mode
        self.worker = dex.Worker(registry, self.cache, options)
        self._thread = threading.Thread(target=self.worker.start, daemon=True)

    def start(self) -> ThreadWorker:
        self._thread.start()
        if self.mode == "pull":
            self.worker.wait_pull_registered(timeout=30)
        else:
            # The target is known before start() binds; wait until the listener accepts.
            with grpc.insecure_channel(self.worker.worker_target.address) as channel:
                grpc.channel_ready_future(channel).result(timeout=30)
        return self

    @property
    def target(self) -> dex.WorkerTarget:
        return self.worker.worker_target

    def stop(self) -> None:
        self.worker.stop()
        self._thread.join(30)
        self.cache.close()
        self._cache_dir.cleanup()


class ChildWorker(ChildProcess):
    """A Worker in its own process group, so tests can SIGKILL it mid-Execute."""

    proc: subprocess.Popen[bytes]

    def __init__(self, server_address: str, mode: Mode, port: int) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "helpers.worker_main", server_address, mode, str(port)],
            env=child_env(),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().decode()
        if not line.startswith("ready"):
            raise RuntimeError(f"child worker failed to start: {line!r}")
