"""What the design's matrix needs to run against a TypeScript runner in the Node sidecar.

Each adapter's matrix module names its package (`SIDECAR_PACKAGE`, a directory under the
repository root) and its Flow type prefix (`FLOW_TYPE_PREFIX`), which the
`sidecar_package` and `flow_type_prefix` fixtures read, and may name the Node binary
that runs its sidecar (`SIDECAR_NODE`, default "node"). It imports the fixtures below and,
for a Step-mode runner, the three sidecar tests, whose scripted models share the
prompts "slow weather" and "charge me" (each package's src/testing/matrix_sidecar.ts).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dex_agents.results import OUTCOME_UNKNOWN_RESULT
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.processes import DexliteProcess, wait_until
from dex_agents_testing.worker_apps import WorkerApp
from remote_flows import TARGET_VARIABLE
from remote_sidecar import Sidecar, build_package

__all__ = [
    "SidecarApp",
    "app",
    "flow_type_prefix",
    "make_app",
    "private_app",
    "sidecar_of",
    "sidecar_package",
    "test_cancel_turn_aborts_the_running_model_call_in_node",
    "test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call",
    "test_sigkill_of_the_sidecar_mid_single_attempt_tool_records_outcome_unknown",
]

SCRIPT = Path(__file__).with_name("remote_flows.py")


@dataclass
class SidecarApp(WorkerApp):
    """A WorkerApp whose Flow reaches the TypeScript runner in its own sidecar."""

    sidecar: Sidecar | None = None

    def stop(self) -> None:
        super().stop()
        if self.sidecar is not None:
            self.sidecar.stop()


def sidecar_of(app: WorkerApp) -> Sidecar:
    assert isinstance(app, SidecarApp)
    assert app.sidecar is not None
    return app.sidecar


@pytest.fixture(scope="module")
def sidecar_package(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The module's `SIDECAR_PACKAGE` compiled, with contracts and core staged beside it."""
    directory: str = request.module.SIDECAR_PACKAGE
    return build_package(
        tmp_path_factory.mktemp("ts"), directory, ["typescript/contracts", "typescript/core"]
    )


@pytest.fixture
def flow_type_prefix(request: pytest.FixtureRequest) -> str:
    """The module's `FLOW_TYPE_PREFIX`, so two adapters' Flow types never collide."""
    prefix: str = request.module.FLOW_TYPE_PREFIX
    return prefix


@pytest.fixture
def make_app(
    request: pytest.FixtureRequest,
    sidecar_package: Path,
    flow_type_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., WorkerApp]:
    node: str = getattr(request.module, "SIDECAR_NODE", "node")

    def make(
        server: DexliteProcess, root: Path, interrupt_deadline: float | None = None
    ) -> WorkerApp:
        flow_type = f"{flow_type_prefix}{uuid.uuid4().hex[:10]}"
        # WorkerApp logs to <root>/<flow_type>.jsonl: the sidecar writes the runs there.
        log = root / f"{flow_type}.jsonl"
        log.touch()
        sidecar = Sidecar(
            sidecar_package, log, [flow_type], script="dist/testing/matrix_sidecar.js", node=node
        ).start()
        monkeypatch.setenv(TARGET_VARIABLE, sidecar.address)
        return SidecarApp(
            server,
            root,
            SCRIPT,
            flow_type=flow_type,
            interrupt_deadline=interrupt_deadline,
            sidecar=sidecar,
        )

    return make


@pytest.fixture
def app(
    make_app: Callable[..., WorkerApp], dexlite: DexliteProcess, tmp_path: Path
) -> Iterator[WorkerApp]:
    made = make_app(dexlite, tmp_path)
    made.start_worker()
    yield made
    made.stop()


@pytest.fixture
def private_app(make_app: Callable[..., WorkerApp], tmp_path: Path) -> Iterator[WorkerApp]:
    server = DexliteProcess(tmp_path / "private.sqlite").start()
    made = make_app(server, tmp_path)
    made.start_worker()
    yield made
    made.stop()
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
