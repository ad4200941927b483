"""A test's Node sidecar and the Worker app whose Flow runs on it, for the RemoteRunner
tests: the sidecar's run log (`runs`, `wait_runs`), its gates and its restart."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dex_agents_testing.processes import DexliteProcess, wait_until
from dex_agents_testing.sidecar import Sidecar
from dex_agents_testing.worker_apps import WorkerApp
from remote_flows import TARGET_VARIABLE

__all__ = ["Remote", "read_runs", "running_remote", "wait_for_runs"]


def read_runs(log: Path, kind: str, **match: Any) -> list[dict[str, Any]]:
    """The sidecar's run-log entries of `kind` whose fields equal `match`."""
    entries = [json.loads(line) for line in log.read_text().splitlines() if line]
    return [
        e for e in entries if e["kind"] == kind and all(e.get(k) == v for k, v in match.items())
    ]


def wait_for_runs(log: Path, kind: str, count: int, **match: Any) -> list[dict[str, Any]]:
    return wait_until(
        lambda: found if len(found := read_runs(log, kind, **match)) >= count else None,
        timeout=30,
        what=f"{count} sidecar {kind} runs matching {match}",
    )


@dataclass
class Remote:
    """One test's sidecar and the Worker app whose Flow runs on it."""

    sidecar: Sidecar
    app: WorkerApp

    def runs(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        return read_runs(self.sidecar.log_path, kind, **match)

    def wait_runs(self, kind: str, count: int, **match: Any) -> list[dict[str, Any]]:
        return wait_for_runs(self.sidecar.log_path, kind, count, **match)

    def open_gate(self, name: str) -> None:
        Path(f"{self.sidecar.log_path}.{name}-gate").touch()

    def restart_sidecar(self) -> None:
        """SIGKILL of the sidecar's process group, then a new one on the same port."""
        self.sidecar.kill()
        self.sidecar.start()


@contextmanager
def running_remote(
    dexlite: DexliteProcess,
    package: Path,
    directory: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    script: Path,
    flow_type_prefix: str,
    sidecar_args: Sequence[str] = (),
    sidecar_script: str | None = None,
) -> Iterator[tuple[Sidecar, WorkerApp]]:
    """A sidecar of `package` for a new Flow type, and a started Worker app on it."""
    flow_type = f"{flow_type_prefix}{uuid.uuid4().hex[:10]}"
    log = directory / "sidecar.jsonl"
    log.touch()
    sidecar = Sidecar(package, log, [flow_type], args=list(sidecar_args))
    if sidecar_script is not None:
        sidecar.script = sidecar_script
    sidecar.start()
    monkeypatch.setenv(TARGET_VARIABLE, sidecar.address)
    app = WorkerApp(dexlite, directory, script, flow_type=flow_type)
    try:
        app.start_worker()
        yield sidecar, app
    finally:
        app.stop()
        sidecar.stop()
