"""The conformance suite: the cases of `proto/testdata/conformance/cases.json`, run on
any adapter through one app factory.

An adapter joins with an app factory module (a `WorkerApp` script) that builds
its framework's agent around `ScriptedApp` (the scripted model's answers and
the tools' bodies, from the data file) and names its `CONFORMANCE` (`Traits`,
with the `nonconforming` cases and why), and with a test module that says
`dexlite, test_conformance = conformance_suite(APP_FACTORY)`. A case with a
`flow` runs on the module's `build_flow` with that flow's keyword arguments
(`flow_options`; `FLOWS` says what each serves),
and a case that shows a `capability` checks the `nonconforming` list against the
runner's declaration.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from dex_agents._runner.declared import declared_runner
from dex_agents_contracts import RunnerCapabilities

from dex_agents_testing.conformance._cases import (
    Call,
    Case,
    Cases,
    CasesError,
    load_cases,
    locate_cases,
    parse_cases,
)
from dex_agents_testing.conformance._flows import CaseApp, McpSourceFactory, flow_options
from dex_agents_testing.conformance._run import Traits, run_case
from dex_agents_testing.conformance._script import (
    JOBS_URL_ENV,
    Answer,
    ScriptedApp,
    deadline,
    jobs_source,
    retry_reason,
    session_options,
)
from dex_agents_testing.conformance._serve import serve
from dex_agents_testing.mcp_jobs import JobsServer
from dex_agents_testing.processes import DexliteProcess
from dex_agents_testing.worker_apps import WorkerApp, load_app

__all__ = [
    "JOBS_URL_ENV",
    "Answer",
    "Call",
    "Case",
    "Cases",
    "CasesError",
    "McpSourceFactory",
    "ScriptedApp",
    "Traits",
    "conformance_suite",
    "deadline",
    "flow_options",
    "jobs_source",
    "load_cases",
    "locate_cases",
    "parse_cases",
    "retry_reason",
    "run_case",
    "serve",
    "session_options",
]


def conformance_suite(
    script: Path,
    *,
    only: Callable[[Case], bool] = lambda case: True,
    traits: Traits | None = None,
    app_type: Callable[..., CaseApp] = CaseApp,
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The `dexlite` fixture and `test_conformance`, parametrised over the data file's
    cases (those `only` keeps); a case in the app's `nonconforming` list is skipped
    with its reason, and a capability's case first checks that list against what the
    app's runner declares. `traits` defaults to the script's `CONFORMANCE`; `app_type`
    (CaseApp's signature, the case's `flow` included) lets a runner outside the Worker
    (a TypeScript adapter in its Node sidecar) start with each app."""
    conformance: Traits = traits if traits is not None else load_app(script).CONFORMANCE
    ids = {c.id for c in load_cases().cases}
    unknown = (set(conformance.nonconforming) | set(conformance.factories)) - ids
    assert not unknown, f"nonconforming or factories name no case: {sorted(unknown)}"
    cases = [c for c in load_cases().cases if only(c)]
    described: list[tuple[str, RunnerCapabilities]] = []

    def declaration(server: DexliteProcess, root: Path) -> tuple[str, RunnerCapabilities]:
        """The runner's name and `describe()`, asked once per module of an app of its own."""
        if not described:
            probe = app_type(server, root, script, flow_type="ConfDescribe")
            try:
                runner = probe.session_flow.runner
                described.append((type(runner).__name__, declared_runner(runner).capabilities))
            finally:
                probe.stop()
        return described[0]

    @pytest.fixture(scope="module")
    def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
        server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
        yield server
        server.stop()

    @pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])
    def test_conformance(
        case: Case, dexlite: DexliteProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        reason = conformance.nonconforming.get(case.id)
        if case.capability is not None:
            _check_declared(*declaration(dexlite, tmp_path), case, reason)
        if reason is not None:
            pytest.skip(f"nonconforming: {reason}")

        def make(*, interrupt_deadline: float | None, server: DexliteProcess) -> WorkerApp:
            return app_type(
                server,
                tmp_path,
                script,
                factory=conformance.factories.get(case.id, "build_flow"),
                flow=case.flow,
                flow_type=f"Conf{uuid.uuid4().hex[:10]}",
                interrupt_deadline=interrupt_deadline,
            )

        with contextlib.ExitStack() as stack:
            jobs_log = None
            if case.flow == "mcp_tasks":
                jobs_log = tmp_path / "jobs.jsonl"
                jobs = JobsServer(jobs_log).start()
                stack.callback(jobs.kill)
                # The app's factory reads it here and in its Worker, which inherits it.
                monkeypatch.setenv(JOBS_URL_ENV, jobs.url)
            server = dexlite
            if case.own_dexlite:
                server = DexliteProcess(tmp_path / "own.sqlite").start()
                stack.callback(server.stop)
            run_case(case, make, conformance, jobs_log=jobs_log, server=server)

    return dexlite, test_conformance


def _check_declared(
    name: str, capabilities: RunnerCapabilities, case: Case, reason: str | None
) -> None:
    """A capability's case is nonconforming exactly when the app's runner declares the
    capability unsupported: the table in docs/adapters.md and the suite agree."""
    assert case.capability is not None
    if getattr(capabilities, case.capability):
        assert reason is None, (
            f"{name} declares {case.capability}, yet its app lists {case.id} as "
            f"nonconforming ({reason}): fix the adapter or its declaration"
        )
        return
    gap = next((g.reason for g in capabilities.gaps if g.capability == case.capability), "")
    assert reason is not None, (
        f"{name} declares {case.capability} unsupported ({gap}); its app's nonconforming "
        f"list must name {case.id} with the framework's reason"
    )
