"""dexlite when the disk refuses writes: a clear error, and nothing stored is lost.

A full disk is the file size limit (RLIMIT_FSIZE) of the dexlite process: past
it a write fails with EFBIG, which SQLite reports as a write I/O error where a
full disk (ENOSPC) reads as SQLITE_FULL; dexlite treats both alike (Python
ignores SIGXFSZ, so the process is not killed). A
read-only file is chmod 0444, or, where that does not bind (root), the
immutable attribute; a machine with neither skips that test.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sqlite3
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import dex
import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess, child_env, free_port
from helpers import disk_flows
from helpers.workers import ThreadWorker

pytestmark = pytest.mark.integration

_PAYLOAD = "x" * 20_000
"""A step input large enough that a few flows fill the size limit."""


class _SizeLimitedDexlite(DexliteProcess):
    """dexlite whose every file may grow to `limit_bytes` only: a disk that fills up."""

    def __init__(self, db_path: Path, limit_bytes: int) -> None:
        super().__init__(db_path)
        self.limit_bytes = limit_bytes

    def free_space(self) -> None:
        """Lifts the size limit of the running process: the disk has room again."""
        assert self.proc is not None
        unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
        resource.prlimit(self.proc.pid, resource.RLIMIT_FSIZE, unlimited)

    def command(self) -> list[str]:
        shim = (
            "import resource, runpy, sys\n"
            # The soft limit only, so the test can lift it again (disk space freed).
            "hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({self.limit_bytes}, hard))\n"
            "sys.argv = ['dexlite', *sys.argv[1:]]\n"
            "runpy.run_module('dexlite', run_name='__main__', alter_sys=True)\n"
        )
        return [sys.executable, "-c", shim, *super().command()[3:]]


def _start_flow(stub: dex_pb2_grpc.FlowServiceStub, flow_id: str) -> None:
    stub.StartFlow(
        pb.StartFlowRequest(
            flow_id=flow_id,
            flow_type="DiskFaults",
            start_step_type="Begin",
            step_input=pb.Value(string_value=_PAYLOAD),
            request_id=uuid.uuid4().hex,
        )
    )


def _integrity(db_path: Path) -> str:
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _stored_flow_ids(db_path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        return {row[0] for row in conn.execute("SELECT flow_id FROM runs")}


def _fill(stub: dex_pb2_grpc.FlowServiceStub, acknowledged: list[str]) -> grpc.RpcError:
    """Starts flows until the disk is full; returns the refusal."""
    for n in range(200):
        flow_id = f"filler-{n}"
        try:
            _start_flow(stub, flow_id)
        except grpc.RpcError as refused:
            return refused
        acknowledged.append(flow_id)
    raise AssertionError("the size limit never bit")


def test_a_full_disk_is_a_clear_unavailable_error_and_loses_no_commit(tmp_path: Path) -> None:
    db_path = tmp_path / "full.sqlite"
    acknowledged: list[str] = []
    limited = _SizeLimitedDexlite(db_path, limit_bytes=400_000)
    with limited as server, grpc.insecure_channel(server.address) as channel:
        stub = dex_pb2_grpc.FlowServiceStub(channel)
        error: grpc.RpcError | None = None
        for n in range(100):
            flow_id = f"flow-{n}"
            try:
                _start_flow(stub, flow_id)
            except grpc.RpcError as refused:
                error = refused
                break
            acknowledged.append(flow_id)
        assert error is not None, "the size limit never bit"
        assert error.code() is grpc.StatusCode.UNAVAILABLE
        prefix = f"dexlite cannot write its database {db_path}: "
        # ENOSPC reads as SQLITE_FULL, the size limit's EFBIG as SQLITE_IOERR.
        assert error.details() in {
            f"{prefix}database or disk is full",
            f"{prefix}disk I/O error",
        }
        assert acknowledged, "the limit bit before the first flow"
        # Still serving: reads work, and a write is refused the same way again.
        summary = stub.GetFlowSummary(pb.GetFlowSummaryRequest(flow_id=acknowledged[-1]))
        assert summary.flow_type == "DiskFaults"
        with pytest.raises(grpc.RpcError) as again:
            _start_flow(stub, "flow-again")
        assert again.value.code() is grpc.StatusCode.UNAVAILABLE
    # Room again: the database is intact and holds every acknowledged flow, no other.
    assert _integrity(db_path) == "ok"
    with DexliteProcess(db_path):
        pass
    assert _stored_flow_ids(db_path) == set(acknowledged)
    assert _integrity(db_path) == "ok"


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """`path` refuses writes for the block, by mode bits or else the immutable flag."""
    mode = path.stat().st_mode
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    immutable = False
    try:
        if os.access(path, os.W_OK):  # root ignores mode bits
            done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
            immutable = done.returncode == 0
            if not immutable:
                pytest.skip("cannot make a file read-only here (root without chattr)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def test_a_read_only_database_is_refused_at_start_and_left_unchanged(tmp_path: Path) -> None:
    db_path = tmp_path / "ro.sqlite"
    with DexliteProcess(db_path) as server, grpc.insecure_channel(server.address) as channel:
        _start_flow(dex_pb2_grpc.FlowServiceStub(channel), "kept")
    before = db_path.read_bytes()
    with _read_only(db_path):
        serve = ["serve", "--listen", f"127.0.0.1:{free_port()}", "--db", str(db_path)]
        done = subprocess.run(
            [sys.executable, "-m", "dexlite", *serve],
            capture_output=True,
            text=True,
            env=child_env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines()[-1] == (
            f"dexlite: dexlite cannot write its database {db_path}: "
            "attempt to write a readonly database"
        )
        assert "Traceback" not in done.stderr
    assert db_path.read_bytes() == before
    assert _integrity(db_path) == "ok"
    assert _stored_flow_ids(db_path) == {"kept"}


@contextlib.contextmanager
def _big_result_cluster(
    db_path: Path, tmp_path: Path
) -> Iterator[tuple[_SizeLimitedDexlite, dex_pb2_grpc.FlowServiceStub, dex.Client]]:
    """A size-limited dexlite, a pull Worker of disk_flows and a Client."""
    disk_flows.reset()
    cache = dex.open_blob_cache(
        dex.BlobCacheConfig(directory=tempfile.mkdtemp(dir=tmp_path), max_bytes=1 << 24)
    )
    limited = _SizeLimitedDexlite(db_path, limit_bytes=1_500_000)
    try:
        with limited as server, grpc.insecure_channel(server.address) as channel:
            worker = ThreadWorker(server.address, "pull", registry=disk_flows.REGISTRY).start()
            client = dex.Client(
                disk_flows.REGISTRY,
                cache,
                dex.ClientOptions(server_address=server.address, worker_target=worker.target),
            )
            try:
                yield limited, dex_pb2_grpc.FlowServiceStub(channel), client
            finally:
                client.close()
                worker.stop()
    finally:
        cache.close()


def _result_meets_a_full_disk(
    stub: dex_pb2_grpc.FlowServiceStub, client: dex.Client, acknowledged: list[str]
) -> None:
    """Runs BigResult, fills the disk while it runs, then lets it return its result."""
    client.start_flow(disk_flows.DISK_FULL, "big", "r")
    acknowledged.append("big")
    assert disk_flows.ENTERED.wait(30), "the Step never ran"
    refused = _fill(stub, acknowledged)
    assert refused.code() is grpc.StatusCode.UNAVAILABLE
    disk_flows.RELEASE.set()  # the Step returns its result: its commit meets the full disk
    # Still refused and still serving; the flow waits with its result unstored.
    with pytest.raises(grpc.RpcError) as again:
        _start_flow(stub, "refused-again")
    assert again.value.code() is grpc.StatusCode.UNAVAILABLE
    assert stub.GetFlowSummary(pb.GetFlowSummaryRequest(flow_id="big")).flow_type


def _stored_record_bytes(db_path: Path) -> int:
    with contextlib.closing(sqlite3.connect(db_path)) as conn:
        row = conn.execute(
            "SELECT length(a.value) FROM attrs a JOIN runs r ON r.run_id=a.run_id"
            " WHERE r.flow_id='big' AND a.key='record'"
        ).fetchone()
    return int(row[0]) if row is not None else 0


def test_a_worker_result_met_by_a_full_disk_is_stored_once_there_is_room(tmp_path: Path) -> None:
    """dexlite's own commit of a Worker's result fails while the disk is full: the
    result is kept and committed once there is room, and the single-attempt Step
    is not dispatched a second time meanwhile."""
    db_path = tmp_path / "result.sqlite"
    acknowledged: list[str] = []
    with _big_result_cluster(db_path, tmp_path) as (limited, stub, client):
        _result_meets_a_full_disk(stub, client, acknowledged)
        limited.free_space()
        result = client.wait_for_flow("big", timeout=timedelta(seconds=60))
        assert result.single_output(str) == "stored on attempt 1"
        assert disk_flows.RUNS == [1], "the Step ran again instead of its result being stored"
    assert _integrity(db_path) == "ok"
    with DexliteProcess(db_path):
        pass
    assert _integrity(db_path) == "ok"
    assert _stored_flow_ids(db_path) == set(acknowledged)
    assert _stored_record_bytes(db_path) >= disk_flows.RESULT_BYTES


def test_a_kill_while_a_result_waits_for_room_counts_the_attempt_as_interrupted(
    tmp_path: Path,
) -> None:
    """dexlite SIGKILLed while a result waits for disk space: the restart counts the
    attempt as interrupted, as after any crash; the unstored result is not stored."""
    db_path = tmp_path / "killed.sqlite"
    acknowledged: list[str] = []
    with _big_result_cluster(db_path, tmp_path) as (limited, stub, client):
        _result_meets_a_full_disk(stub, client, acknowledged)
        limited.kill()
        limited.limit_bytes = resource.RLIM_INFINITY  # room again before the restart
        limited.start()
        result = client.wait_for_flow("big", timeout=timedelta(seconds=60))
        assert result.status is dex.FlowStatus.FAILED, result.error_message
        assert disk_flows.RUNS == [1], "a single-attempt Step ran again"
    assert _integrity(db_path) == "ok"
    assert _stored_flow_ids(db_path) == set(acknowledged)
    assert _stored_record_bytes(db_path) == 0
