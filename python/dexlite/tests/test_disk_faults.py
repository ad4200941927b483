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
import sqlite3
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from dex.dexpb import dex_pb2 as pb
from dex.dexpb import dex_pb2_grpc
from dexlite.testing import DexliteProcess, child_env, free_port

pytestmark = pytest.mark.integration

_PAYLOAD = "x" * 20_000
"""A step input large enough that a few flows fill the size limit."""


class _SizeLimitedDexlite(DexliteProcess):
    """dexlite whose every file may grow to `limit_bytes` only: a disk that fills up."""

    def __init__(self, db_path: Path, limit_bytes: int) -> None:
        super().__init__(db_path)
        self.limit_bytes = limit_bytes

    def command(self) -> list[str]:
        shim = (
            "import resource, runpy, sys\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({self.limit_bytes}, {self.limit_bytes}))\n"
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
