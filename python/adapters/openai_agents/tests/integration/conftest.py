"""Fixtures of the integration tests: a shared dexlite, and Worker apps on it or on their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from dex_agents_testing import DexliteProcess

from integration.oai_workers import App


@pytest.fixture(scope="module")
def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
    server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
    yield server
    server.stop()


@pytest.fixture
def app(dexlite: DexliteProcess, tmp_path: Path) -> Iterator[App]:
    made = App(dexlite, tmp_path)
    made.start_worker()
    yield made
    made.stop()


@pytest.fixture
def private_app(tmp_path: Path) -> Iterator[App]:
    """An app on a dexlite of its own, for tests that kill Workers mid-Step."""
    server = DexliteProcess(tmp_path / "private.sqlite").start()
    made = App(server, tmp_path)
    made.start_worker()
    yield made
    made.stop()
    server.stop()
