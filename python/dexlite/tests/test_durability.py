"""Crash semantics: a killed Worker fails its attempt; a killed dexlite resumes from SQLite."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import dex
import pytest
from dexlite.testing import DexliteProcess, free_port
from helpers import flows
from helpers.flows import OPS, REGISTRY, TIMERS
from helpers.workers import ChildWorker, Mode, ThreadWorker

pytestmark = pytest.mark.integration


@pytest.fixture
def private_server(tmp_root: Path, request: pytest.FixtureRequest) -> Iterator[DexliteProcess]:
    """A dexlite of its own, because these tests kill processes."""
    server = DexliteProcess(str(tmp_root / f"{request.node.name}.sqlite")).start()
    yield server
    server.stop()


def _client(address: str, target: dex.WorkerTarget) -> tuple[dex.Client, dex.BlobCache]:
    cache_dir = tempfile.mkdtemp()
    cache = dex.open_blob_cache(dex.BlobCacheConfig(directory=cache_dir, max_bytes=1 << 24))
    return dex.Client(
        REGISTRY, cache, dex.ClientOptions(server_address=address, worker_target=target)
    ), cache


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("hang", "recovered hang: "),  # single attempt -> failure route
        ("hangonce", "done on attempt 2"),  # retried -> runs again
    ],
)
def test_worker_sigkilled_mid_execute(
    private_server: DexliteProcess, mode: Mode, step: str, expected: str
) -> None:
    port = free_port()
    child = ChildWorker(private_server.address, mode, port)
    target = (
        dex.WorkerTarget(pull=True)
        if mode == "pull"
        else dex.WorkerTarget(address=f"127.0.0.1:{port}")
    )
    client, cache = _client(private_server.address, target)
    replacement: ThreadWorker | None = None
    try:
        flow_id = f"kill-{step}-{mode}-{uuid.uuid4().hex[:8]}"
        client.start_flow(OPS, flow_id, None)
        client.invoke_rpc(OPS.run, flow_id, step)
        mark = client.read_stream(flow_id, flows.marks, timeout=timedelta(seconds=30))
        assert "attempt 1" in mark.value
        child.kill()
        # A fresh Worker takes over (same port in listening mode, any stream in pull mode).
        replacement = ThreadWorker(private_server.address, mode, port=port).start()
        output = client.wait_for_flow(flow_id, timeout=timedelta(seconds=60)).single_output(str)
        assert output.startswith(expected)
    finally:
        if child.proc.poll() is None:
            child.kill()
        if replacement is not None:
            replacement.stop()
        client.close()
        cache.close()


def test_dexlite_sigkilled_and_restarted_keeps_timer_and_queued_message(
    private_server: DexliteProcess, mode: Mode
) -> None:
    worker = ThreadWorker(private_server.address, mode).start()
    client, cache = _client(private_server.address, worker.target)
    try:
        flow_id = f"restart-{uuid.uuid4().hex[:8]}"
        client.start_flow(TIMERS, flow_id, 3600)
        # Replace the Sleeper by a PairWait: all of a 2 s timer and two messages.
        client.invoke_rpc(TIMERS.pair, flow_id, 2)
        assert client.invoke_rpc(TIMERS.send, flow_id, "first") == 1  # queued, not consumed
        private_server.kill()
        private_server.restart()
        assert client.invoke_rpc(TIMERS.send, flow_id, "second") >= 1
        result = client.wait_for_flow(flow_id, timeout=timedelta(seconds=60))
        assert result.single_output(str) == "fired=True got=['first', 'second']"
    finally:
        worker.stop()
        client.close()
        cache.close()


def test_dexlite_sigkilled_mid_execute_redispatches_the_step(
    private_server: DexliteProcess, mode: Mode
) -> None:
    worker = ThreadWorker(private_server.address, mode).start()
    client, cache = _client(private_server.address, worker.target)
    try:
        flow_id = f"resume-{uuid.uuid4().hex[:8]}"
        client.start_flow(OPS, flow_id, None)
        client.invoke_rpc(OPS.run, flow_id, "resumable")
        mark = client.read_stream(flow_id, flows.marks, timeout=timedelta(seconds=30))
        assert mark.value == "resumable attempt 1"
        private_server.kill()
        private_server.restart()
        result = client.wait_for_flow(flow_id, timeout=timedelta(seconds=60))
        assert result.single_output(str) == "resumed on attempt 2"
    finally:
        worker.stop()
        client.close()
        cache.close()


def test_listening_busy_worker_never_spends_an_attempt(tmp_root: Path) -> None:
    """With more server slots than the Worker's gRPC cap, RESOURCE_EXHAUSTED is retried for free."""
    server = DexliteProcess(
        str(tmp_root / f"busy-{uuid.uuid4().hex[:8]}.sqlite"), "--worker-slots", "8"
    )
    server.start()
    worker = ThreadWorker(server.address, "listen").start()
    client, cache = _client(server.address, worker.target)
    try:
        flow_id = f"busy-{uuid.uuid4().hex[:8]}"
        client.start_flow(flows.SLOW_FAN_OUT, flow_id, 8)
        result = client.wait_for_flow(flow_id, timeout=timedelta(seconds=60))
        assert [c.decode(int) for c in result.completions] == [1] * 8  # every SlowLeaf on attempt 1
    finally:
        worker.stop()
        client.close()
        cache.close()
        server.stop()
