"""The conformance suite through a TypeScript adapter: dexlite, a Python Worker child
whose session Flow runs on a `RemoteRunner` (ts_worker_app.py), and the adapter's Node
sidecar serving its conformance app (the data file's script, @dex-agents/core/testing's
`ConformanceScript`).

An adapter's test module names its `ADAPTER` (`TsAdapter`: package, traits with the
`nonconforming` cases and why) and says
`dexlite, test_conformance = ts_conformance_suite(ADAPTER)`; the sidecar tests below
(SIGKILL of the Node process group mid-RunModel and mid single-attempt tool, cancel_turn
reaching the model call in Node) it imports by name, reading `ADAPTER` from the module.
The cases' Worker kills SIGKILL the Python Worker; the sidecar stays up.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_testing.conformance import Traits, conformance_suite, locate_cases
from dex_agents_testing.conformance._flows import CaseApp
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.processes import DexliteProcess, wait_until
from dex_agents_testing.sidecar import Sidecar, build_package
from dex_agents_testing.worker_apps import WorkerApp
from ts_worker_app import SIDECAR_VARIABLE

__all__ = [
    "SidecarApp",
    "TsAdapter",
    "adapter_gap",
    "app",
    "no_plan_mode",
    "no_tool_sources",
    "private_app",
    "sidecar_of",
    "test_cancel_turn_aborts_the_running_model_call_in_node",
    "test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
    "ts_conformance_suite",
]

SCRIPT = Path(__file__).with_name("ts_worker_app.py")


def adapter_gap(runner: str, capability: str, detail: str) -> str:
    """A nonconforming reason where the adapter, not its framework, lacks the capability
    (issue 42 item 6 closes these): `detail` says what the framework offers."""
    return (
        f"an adapter gap, not the framework's (issue 42 item 6): {runner} declares no "
        f"{capability} (its capabilities.json); {detail}"
    )


def no_plan_mode(runner: str) -> dict[str, str]:
    """The plan-mode case of a runner that does not plan yet, though TypeScript
    Stepwise shows how (the kit's offeredBuiltIns and its plan note)."""
    detail = (
        "it would hide the agent's tools in a planning turn, offer write_todos alone and "
        "show the plan note, as TypeScript Stepwise does"
    )
    return {"plan_mode": adapter_gap(runner, "plan_mode", detail)}


def no_tool_sources(runner: str) -> dict[str, str]:
    """The MCP cases of a runner that takes no tool sources, though the TypeScript kit's
    `McpToolSource` (typescript/core/src/mcp/source.ts) serves TypeScript Stepwise's."""
    kit = "the kit's McpToolSource (typescript/core/src/mcp/source.ts) would serve them"
    return {
        "mcp_source_tool": adapter_gap(runner, "mcp_sources", kit),
        "mcp_task_is_polled": adapter_gap(runner, "mcp_tasks", f"no tool sources; {kit}"),
    }


@dataclass(frozen=True)
class TsAdapter:
    directory: str
    """The workspace package, e.g. typescript/adapters/pi."""
    traits: Traits
    node: str = "node"
    """The Node binary of its sidecar (`pinned_node()` for a framework that needs Node 22)."""


@functools.cache
def built_package(directory: str) -> Path:
    """The package compiled once per test process, contracts and core staged beside it."""
    work = Path(tempfile.mkdtemp(prefix="ts-", dir=os.environ.get("TEST_TMPDIR")))
    return build_package(work, directory, ["typescript/contracts", "typescript/core"])


@dataclass
class SidecarApp(CaseApp):
    """A WorkerApp whose Flow reaches a TypeScript package's conformance sidecar, a
    sidecar of its own started first (the client's `RemoteRunner` learns the runner
    when it is made)."""

    directory: str = ""
    """The workspace package whose src/testing/conformance_sidecar.ts serves the runner."""
    node: str = "node"
    sidecar: Sidecar | None = None

    def __post_init__(self) -> None:
        log = self.root / f"{self.flow_type}.jsonl"  # WorkerApp's log: the sidecar writes it
        log.touch()
        os.environ["DEX_CONFORMANCE_CASES"] = str(locate_cases())
        self.sidecar = Sidecar(
            built_package(self.directory),
            log,
            [self.flow_type],
            script="dist/testing/conformance_sidecar.js",
            args=["--factory", self.factory],
            node=self.node,
        ).start()
        os.environ[SIDECAR_VARIABLE] = self.sidecar.address
        try:
            super().__post_init__()
        except BaseException:
            self.sidecar.stop()  # no app to stop it later
            raise

    def stop(self) -> int:
        code = super().stop()
        if self.sidecar is not None:
            self.sidecar.stop()
        return code


def ts_conformance_suite(
    adapter: TsAdapter, **options: Any
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The `dexlite` fixture and `test_conformance` of `conformance_suite` for `adapter`."""
    return conformance_suite(
        SCRIPT,
        traits=adapter.traits,
        app_type=functools.partial(SidecarApp, directory=adapter.directory, node=adapter.node),
        **options,
    )


def sidecar_of(app: WorkerApp) -> Sidecar:
    assert isinstance(app, SidecarApp)
    assert app.sidecar is not None
    return app.sidecar


def _make(request: pytest.FixtureRequest, server: DexliteProcess, root: Path) -> SidecarApp:
    adapter: TsAdapter = request.module.ADAPTER
    return SidecarApp(server, root, SCRIPT, directory=adapter.directory, node=adapter.node)


@pytest.fixture
def app(
    request: pytest.FixtureRequest, dexlite: DexliteProcess, tmp_path: Path
) -> Iterator[WorkerApp]:
    made = _make(request, dexlite, tmp_path)
    try:
        made.start_worker()
        yield made
    finally:
        made.stop()


@pytest.fixture
def private_app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[WorkerApp]:
    server = DexliteProcess(tmp_path / "private.sqlite").start()
    try:
        made = _make(request, server, tmp_path)
        try:
            made.start_worker()
            yield made
        finally:
            made.stop()
    finally:
        server.stop()


def test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call(
    private_app: WorkerApp,
) -> None:
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    sidecar = sidecar_of(app)
    sidecar.kill()  # mid model call, in Node
    sidecar.start()
    wait_until(
        lambda: len([e for e in app.entries("model") if e["results"]]) == 2,
        what="the model call again, in the restarted sidecar",
    )
    app.gate("model").touch()
    done = app.wait_idle(session, 1, timeout=60)
    assert done.messages[-1].text == "Results: get_weather=sunny in Paris"
    assert [bool(e["results"]) for e in app.entries("model")] == [False, True, True]
    assert len(app.entries("tool", "get_weather")) == 1
    assert_step_shape(app.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])


def test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown(
    private_app: WorkerApp,
) -> None:
    app = private_app
    session = app.start("charge me")
    wait_until(lambda: len(app.entries("tool", "charge")) == 1, what="the charge to start")
    sidecar = sidecar_of(app)
    sidecar.kill()  # mid-tool, in Node
    sidecar.start()
    app.gate("charge").touch()  # a second run would now finish at once
    done = app.wait_idle(session, 1, timeout=90)
    assert len(app.entries("tool", "charge")) == 1
    assert app.entries("model")[-1]["results"] == {"p1": OUTCOME_UNKNOWN_RESULT}
    assert done.messages[-1].text == f"Results: charge={OUTCOME_UNKNOWN_RESULT}"
    assert_step_shape(
        app.history(session),
        ["RunModel", "RecordToolOutcomeUnknown", "ResumeTurn", "RunModel"],
    )


def test_cancel_turn_aborts_the_running_model_call_in_node(app: WorkerApp) -> None:
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    assert app.client.cancel_turn(session)
    wait_until(lambda: app.entries("model_aborted"), what="Node to abort the model call")
    snapshot = app.wait_idle(session, 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    assert len([e for e in app.entries("model") if e["results"]]) == 1
