"""The one checker every adapter's run-state fixture test calls.

It resumes a recorded turn with today's runner: the runner comes from the
adapter's test app with the fixture's model script, `run_model_step` gets the
decoded turn context (offline event writer and heartbeat; the run state is the
real one), and the normalised outcome must equal the recorded next action.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from dex_agents._remote.frames import agent_turn_context
from dex_agents.offline import RecordingEventWriter, no_heartbeat, run_sync
from dex_agents.runner import AgentFrameworkRunner, AgentTurnOutcome
from dex_agents_contracts import RunnerTurnContext

from dex_agents_testing.run_state_fixtures._format import (
    RunStateFixture,
    normalise_outcome,
    read_fixture,
    run_state_sha256,
)

__all__ = ["RunnerFactory", "check_run_state_fixture", "fixture_paths", "resume"]

RunnerFactory = Callable[
    [Sequence[Mapping[str, Any]]], AbstractContextManager[AgentFrameworkRunner[Any]]
]
"""The adapter's test app: a runner whose model answers the given script."""


def fixture_paths(directory: Path, points: Collection[str]) -> list[Path]:
    """The fixtures of `directory`; raises when they are not exactly `points`, so
    a deleted fixture fails as loudly as a broken one."""
    paths = sorted(directory.glob("*.json"))
    found = {path.stem for path in paths}
    if found != set(points):
        raise AssertionError(f"{directory}: fixtures {sorted(found)}, expected {sorted(points)}")
    return paths


async def _resume(runner: AgentFrameworkRunner[Any], wire: RunnerTurnContext) -> AgentTurnOutcome:
    turn = agent_turn_context(wire, events=RecordingEventWriter(), heartbeat=no_heartbeat)
    return await runner.run_model_step(turn)


def resume(fixture: RunStateFixture, build_runner: RunnerFactory) -> dict[str, Any]:
    """The normalised next action of the fixture's turn under today's runner."""
    with build_runner(fixture.model_script) as runner:
        return normalise_outcome(run_sync(_resume(runner, fixture.turn_context)))


def check_run_state_fixture(path: Path, *, adapter: str, build_runner: RunnerFactory) -> None:
    """Raises AssertionError with what differs; the file is only read, never rewritten."""
    fixture = read_fixture(path)
    assert fixture.adapter == adapter, f"{path}: recorded for {fixture.adapter!r}"
    assert fixture.point == path.stem, f"{path}: holds the point {fixture.point!r}"
    state = fixture.turn_context.framework_run_state
    assert state, f"{path}: the turn context has no framework_run_state"
    assert run_state_sha256(state) == fixture.framework_run_state_sha256, (
        f"{path}: framework_run_state is not the one recorded (sha256 differs); "
        "record the fixture again instead of editing it"
    )
    outcome = resume(fixture, build_runner)
    assert outcome == fixture.expected, (
        f"{path}: resuming the stored run state gave {outcome!r}, "
        f"the recorded session went on with {dict(fixture.expected)!r}"
    )


def fixture_test(
    tests: Path, app_file: str, *, adapter: str, points: Collection[str]
) -> Callable[[Path, Path], None]:
    """The pytest test an adapter's `test_run_state_fixtures.py` assigns to a module name.

    It resumes every fixture under `tests/fixtures/run_states` (exactly `points`)
    with the runner `tests/integration/<app_file>` builds for the fixture's script.
    """
    import pytest  # noqa: PLC0415 - only test modules call this; the package needs no pytest

    from dex_agents_testing.worker_apps import load_app  # noqa: PLC0415 - worker_apps is heavy

    app = load_app(tests / "integration" / app_file)
    paths = fixture_paths(tests / "fixtures" / "run_states", points)

    @pytest.mark.parametrize("fixture", paths, ids=lambda p: p.stem)
    def test_a_stored_run_state_resumes_to_the_recorded_next_action(
        fixture: Path, tmp_path: Path
    ) -> None:
        check_run_state_fixture(
            fixture,
            adapter=adapter,
            build_runner=lambda script: app.scripted_runner(script, str(tmp_path / "log.jsonl")),
        )

    return test_a_stored_run_state_resumes_to_the_recorded_next_action
