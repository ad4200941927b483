"""Shared fixtures: one dexlite child per session, Workers per mode, SDK Clients."""

from __future__ import annotations

import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
try:
    import dexlite  # noqa: F401
except ImportError:  # plain pytest from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import dex  # noqa: E402 - after the sys.path setup above
from dexlite.testing import DexliteProcess, scratch_dir  # noqa: E402 - after the sys.path setup above
from helpers.flows import REGISTRY  # noqa: E402 - after the sys.path setup above
from helpers.workers import Mode, ThreadWorker  # noqa: E402 - after the sys.path setup above


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[Path]:
    with scratch_dir("DEXLITE_TEST_TMP", "dexlite-tests-") as root:
        yield root


@pytest.fixture(scope="session")
def dexlite_server(tmp_root: Path) -> Iterator[DexliteProcess]:
    server = DexliteProcess(str(tmp_root / "shared.sqlite"), "--sync", "normal").start()
    yield server
    assert server.stop() == 0


@pytest.fixture(scope="session")
def listen_worker(dexlite_server: DexliteProcess) -> Iterator[ThreadWorker]:
    worker = ThreadWorker(dexlite_server.address, "listen").start()
    yield worker
    worker.stop()


@pytest.fixture(scope="session")
def pull_worker(dexlite_server: DexliteProcess) -> Iterator[ThreadWorker]:
    worker = ThreadWorker(dexlite_server.address, "pull").start()
    yield worker
    worker.stop()


@pytest.fixture(params=["listen", "pull"])
def mode(request: pytest.FixtureRequest) -> Mode:
    value: Mode = request.param
    return value


@pytest.fixture
def client(
    mode: Mode, dexlite_server: DexliteProcess, request: pytest.FixtureRequest
) -> Iterator[dex.Client]:
    worker: ThreadWorker = request.getfixturevalue(f"{mode}_worker")
    cache_dir = tempfile.TemporaryDirectory()
    cache = dex.open_blob_cache(dex.BlobCacheConfig(directory=cache_dir.name, max_bytes=1 << 24))
    client = dex.Client(
        REGISTRY,
        cache,
        dex.ClientOptions(server_address=dexlite_server.address, worker_target=worker.target),
    )
    yield client
    client.close()
    cache.close()
    cache_dir.cleanup()


@pytest.fixture
def flow_id() -> str:
    return f"f-{uuid.uuid4().hex[:12]}"
