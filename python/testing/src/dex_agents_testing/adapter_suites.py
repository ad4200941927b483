"""What every adapter's integration suite shares: its fixtures and its example check.

An adapter's `conftest.py` takes the fixtures with one line,
`dexlite, app, private_app = worker_app_fixtures(App)`: a dexlite per test
module, a `WorkerApp` with its Worker child on it per test, and one on a dexlite
of its own for tests that SIGKILL Workers mid-Step. `check_refund_example`
runs an adapter's example (python/examples, the refund scenario) as a child
process and checks what it printed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.worker_apps import WorkerApp

__all__ = ["check_refund_example", "worker_app_fixtures"]

AppT = TypeVar("AppT", bound=WorkerApp)


def worker_app_fixtures(
    make_app: Callable[[DexliteProcess, Path], AppT],
) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """The `dexlite`, `app` and `private_app` fixtures; `make_app(server, directory)` is
    usually the suite's `WorkerApp` subclass, whose script has a default."""

    @pytest.fixture(scope="module")
    def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
        server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
        yield server
        server.stop()

    @pytest.fixture
    def app(dexlite: DexliteProcess, tmp_path: Path) -> Iterator[AppT]:
        made = make_app(dexlite, tmp_path)
        made.start_worker()
        yield made
        made.stop()

    @pytest.fixture
    def private_app(tmp_path: Path) -> Iterator[AppT]:
        """An app on a dexlite of its own, for tests that kill Workers mid-Step."""
        server = DexliteProcess(tmp_path / "private.sqlite").start()
        made = make_app(server, tmp_path)
        made.start_worker()
        yield made
        made.stop()
        server.stop()

    return dexlite, app, private_app


def check_refund_example(script: Path, session_prefix: str) -> str:
    """Runs the example with this interpreter's path; its stdout, once it is checked."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The example asserts the whole Step shape itself; the parallel middle has no fixed order.
    assert "Step shape: RunModel -> " in result.stdout
    assert "-> ResumeTurn -> RunModel" in result.stdout
    refunded = f"issue_refund -> refunded 42.00 EUR for A-1001 (idempotency key {session_prefix}-"
    assert refunded in result.stdout
    return result.stdout
