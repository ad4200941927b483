"""Shared fixtures: one dexlite per test session, and a harness per scripted scenario."""

from __future__ import annotations

import os
import shlex
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dex_agents_testing import DexliteProcess
from dexlite.testing import scratch_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import Harness, HarnessFactory

# Extra `dexlite serve` flags for every server these tests start, so one Bazel target
# can rerun the same files under another server mode (e.g. --cancel-only-heartbeating).
_DEXLITE_ARGS = tuple(shlex.split(os.environ.get("DEX_AGENTS_DEXLITE_ARGS", "")))


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[Path]:
    # DEX_AGENTS_TEST_TMP keeps databases, run logs and Worker logs for post-mortems.
    with scratch_dir("DEX_AGENTS_TEST_TMP", "dex-agents-tests-") as root:
        yield root


@pytest.fixture(scope="session")
def dexlite(tmp_root: Path) -> Iterator[DexliteProcess]:
    server = DexliteProcess(tmp_root / "shared.sqlite", "--sync", "normal", *_DEXLITE_ARGS).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def core_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """typescript/core compiled once per target, for the RemoteRunner tests' sidecars."""
    # Only the targets that stage typescript/ call this.
    from dex_agents_testing.sidecar import build_core_package

    return build_core_package(tmp_path_factory.mktemp("ts"))


@pytest.fixture
def private_dexlite(tmp_root: Path) -> Iterator[DexliteProcess]:
    """A dexlite of the test's own, for tests that kill processes."""
    server = DexliteProcess(
        tmp_root / f"private-{uuid.uuid4().hex[:8]}.sqlite", *_DEXLITE_ARGS
    ).start()
    yield server
    server.stop()


@pytest.fixture
def harness(dexlite: DexliteProcess, tmp_root: Path) -> Iterator[HarnessFactory]:
    made: list[Harness] = []

    def make(**scenario: Any) -> Harness:
        h = Harness.create(dexlite, tmp_root, **scenario)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


@pytest.fixture
def private_harness(private_dexlite: DexliteProcess, tmp_root: Path) -> Iterator[HarnessFactory]:
    made: list[Harness] = []

    def make(**scenario: Any) -> Harness:
        h = Harness.create(private_dexlite, tmp_root, **scenario)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()


@pytest.fixture
def factory_harness(dexlite: DexliteProcess, tmp_root: Path) -> Iterator[Callable[..., Harness]]:
    """`make("module:function", {config})`: a Worker serving the Flow that factory builds."""
    made: list[Harness] = []

    def make(factory: str, config: dict[str, Any] | None = None, **kwargs: Any) -> Harness:
        h = Harness.create_from_factory(dexlite, tmp_root, factory, config, **kwargs)
        made.append(h)
        return h

    yield make
    for h in made:
        h.close()
