"""The design's matrix through the real path for a TypeScript runner: dexlite, a Python
Worker child whose session Flow runs on a `RemoteRunner`, and the Node sidecar serving
`VercelAiRunner` (@dex-agents/vercel-ai, `ai` 7 with a scripted MockLanguageModelV4,
typescript/adapters/vercel-ai/src/testing/matrix_sidecar.ts). The matrix's kills
SIGKILL the Python Worker; test_remote_runner.py kills the sidecar."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from dex_agents.runner import OUTCOME_UNKNOWN_RESULT
from dex_agents_testing.history import assert_step_shape
from dex_agents_testing.matrix import (
    MatrixExpectations,
    test_approval_deadline_rejects_the_call,
    test_approved_write_survives_worker_restart_and_runs_once,
    test_async_durability_default_never_reruns_single_attempt_write,
    test_failed_turn_after_write_leaves_note_and_write_is_not_repeated,
    test_message_sent_during_a_turn_is_queued,
    test_parallel_tool_calls_run_as_parallel_steps,
    test_read_tool_turn_has_step_shape_and_replays_history,
    test_rejected_write_never_runs_and_the_model_sees_why,
    test_sigkill_during_run_model_reruns_only_that_model_call,
    test_sigkill_during_single_attempt_tool_records_outcome_unknown,
    test_structured_output_with_a_validator_retry_is_two_run_model_steps,
    test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps,
)
from dex_agents_testing.processes import DexliteProcess, wait_until
from dex_agents_testing.worker_apps import WorkerApp
from remote_flows import TARGET_VARIABLE
from remote_sidecar import Sidecar, build_package

__all__ = [
    "test_approval_deadline_rejects_the_call",
    "test_approved_write_survives_worker_restart_and_runs_once",
    "test_async_durability_default_never_reruns_single_attempt_write",
    "test_failed_turn_after_write_leaves_note_and_write_is_not_repeated",
    "test_message_sent_during_a_turn_is_queued",
    "test_parallel_tool_calls_run_as_parallel_steps",
    "test_read_tool_turn_has_step_shape_and_replays_history",
    "test_rejected_write_never_runs_and_the_model_sees_why",
    "test_sigkill_during_run_model_reruns_only_that_model_call",
    "test_sigkill_during_single_attempt_tool_records_outcome_unknown",
    "test_structured_output_with_a_validator_retry_is_two_run_model_steps",
    "test_ungated_and_gated_tools_of_one_response_run_only_in_their_steps",
]

SCRIPT = Path(__file__).with_name("remote_flows.py")


@pytest.fixture(scope="module")
def vercel_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("ts")
    return build_package(
        work, "typescript/adapters/vercel-ai", ["typescript/contracts", "typescript/core"]
    )


@pytest.fixture
def matrix() -> MatrixExpectations:
    # The "book" turn as the AI SDK stores it: the assistant message with both calls,
    # one tool message with both results, the answer; plus the user message on each side.
    # Structured output is Output.object's JSON text, a retry prompt a user message.
    return MatrixExpectations(messages_after_booking=5, structured_output_as_text=True)


@dataclass
class SidecarApp(WorkerApp):
    """A WorkerApp whose Flow reaches the VercelAiRunner in its own sidecar."""

    sidecar: Sidecar | None = None

    def stop(self) -> None:
        super().stop()
        if self.sidecar is not None:
            self.sidecar.stop()


@pytest.fixture
def make_app(vercel_package: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., WorkerApp]:
    def make(
        server: DexliteProcess, root: Path, interrupt_deadline: float | None = None
    ) -> WorkerApp:
        flow_type = f"Vercel{uuid.uuid4().hex[:10]}"
        # WorkerApp logs to <root>/<flow_type>.jsonl: the sidecar writes the runs there.
        log = root / f"{flow_type}.jsonl"
        log.touch()
        sidecar = Sidecar(
            vercel_package, log, [flow_type], script="dist/testing/matrix_sidecar.js"
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


@pytest.fixture(scope="module")
def dexlite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DexliteProcess]:
    server = DexliteProcess(tmp_path_factory.mktemp("dexlite") / "db.sqlite").start()
    yield server
    server.stop()


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


def _sidecar(app: WorkerApp) -> Sidecar:
    assert isinstance(app, SidecarApp)
    assert app.sidecar is not None
    return app.sidecar


def test_sigkill_of_the_sidecar_mid_run_model_reruns_only_that_model_call(
    private_app: WorkerApp,
) -> None:
    app = private_app
    session = app.start("slow weather")
    wait_until(
        lambda: any(e["results"] for e in app.entries("model")), what="the second model call"
    )
    sidecar = _sidecar(app)
    sidecar.kill()  # mid-streamText, in Node
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
    sidecar = _sidecar(app)
    sidecar.kill()  # mid-tool, in Node
    sidecar.start()
    app.gate("charge").touch()  # a second run would now finish at once
    done = app.wait_idle(session, 1, timeout=60)
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
