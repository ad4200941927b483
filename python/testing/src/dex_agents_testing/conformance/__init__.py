"""The conformance suite: the cases of `proto/testdata/conformance/cases.json`, run on
any adapter through one app factory.

An adapter joins with an app factory module (a `WorkerApp` script) that builds
its framework's agent around `ScriptedApp` (the scripted model's answers and
the tools' bodies, from the data file) and names its `CONFORMANCE` (`Traits`,
with the `nonconforming` cases and why), and with a test module that says
`dexlite, test_conformance = conformance_suite(APP_FACTORY)`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dex_agents_testing.conformance._cases import (
    Call,
    Case,
    Cases,
    CasesError,
    load_cases,
    locate_cases,
    parse_cases,
)
from dex_agents_testing.conformance._run import Traits, run_case
from dex_agents_testing.conformance._script import Answer, ScriptedApp, deadline, retry_reason
from dex_agents_testing.conformance._serve import serve
from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.worker_apps import WorkerApp, load_app

__all__ = [
    "Answer",
    "Call",
    "Case",
    "Cases",
    "CasesError",
    "ScriptedApp",
    "Traits",
    "conformance_suite",
    "deadline",
    "load_cases",
    "locate_cases",
    "parse_cases",
    "retry_reason",
    "run_case",
    "serve",
]


def conformance_suite(
    script: Path,
    *,
    only: Callable[[Case], bool] = lambda case: True,
    traits: Traits | None = None,
    app_type: Callable[..., WorkerApp] = WorkerApp,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The `dexlite` fixture and `test_conformance`, parametrised over the data file's
    cases (those `only` keeps); a case in the app's `nonconforming` list is skipped
    with its reason. `traits` defaults to the script's `CONFORMANCE`; `app_type`
    (WorkerApp's signature) lets a runner outside the Worker (a TypeScript adapter in
    its Node sidecar) start with each app."""
    declared: Traits = traits if traits is not None else load_app(script).CONFORMANCE
    unknown = set(declared.nonconforming) - {c.id for c in load_cases().cases}
    assert not unknown, f"nonconforming names no case: {sorted(unknown)}"
    cases = [c for c in load_cases().cases if only(c)]

    @pytest.fixture(scope="module")
    def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
        server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
        yield server
        server.stop()

    @pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
    def test_conformance(case: Case, dexlite: DexliteProcess, tmp_path: Path) -> None:
        reason = declared.nonconforming.get(case.id)
        if reason is not None:
            pytest.skip(f"nonconforming: {reason}")

        def make(*, interrupt_deadline: float | None, server: DexliteProcess) -> WorkerApp:
            return app_type(
                server,
                tmp_path,
                script,
                flow_type=f"Conf{uuid.uuid4().hex[:10]}",
                interrupt_deadline=interrupt_deadline,
            )

        if not case.own_dexlite:
            run_case(case, make, declared, server=dexlite)
            return
        own = DexliteProcess(tmp_path / "own.sqlite").start()
        try:
            run_case(case, make, declared, server=own)
        finally:
            own.stop()

    return dexlite, test_conformance
