"""The one checker every adapter's run-state fixture test calls.

It resumes a recorded turn with today's runner: the runner comes from the
adapter's test app with the fixture's model script, `run_model_step` gets the
decoded turn context (offline event writer and heartbeat; the run state is the
real one), and the normalised outcome must equal the recorded next action.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from dex_agents._remote.frames import agent_turn_context
from dex_agents._runner.declared import DescribedRunner
from dex_agents.offline import RecordingEventWriter, no_heartbeat, run_sync
from dex_agents.runner import AgentFrameworkRunner, AgentTurnOutcome
from dex_agents_contracts import RunnerTurnContext

from dex_agents_testing.run_state_fixtures._format import (
    POINTS,
    RunStateFixture,
    normalise_outcome,
    read_fixture,
    run_state_sha256,
)

__all__ = [
    "POINT_CAPABILITIES",
    "RunnerFactory",
    "check_point_unsupported",
    "check_run_state_fixture",
    "fixture_paths",
    "fixture_test",
    "resume",
]

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


POINT_CAPABILITIES: Mapping[str, str] = {
    "mid_plan": "plan_mode",
    "after_compaction": "compaction",
    "after_handoff": "handoffs",
}
"""The capability a point needs; the others (a tool result, an approval) every runner has."""


def check_point_unsupported(
    directory: Path, point: str, reason: str, build_runner: RunnerFactory
) -> None:
    """A point the recipe calls impossible: no fixture of it exists, and the runner
    declares the capability it needs unsupported, so the recipe cannot hide a gap."""
    assert reason.strip(), f"{directory}: the recipe gives no reason {point} is impossible"
    assert not (directory / f"{point}.json").exists(), (
        f"{directory}: {point}.json exists, yet the recipe calls {point} impossible"
    )
    capability = POINT_CAPABILITIES.get(point)
    assert capability is not None, f"every runner reaches {point}; record it"
    with build_runner(()) as runner:
        assert isinstance(runner, DescribedRunner), f"{type(runner).__name__} has no describe()"
        declared = runner.describe()
    assert not getattr(declared, capability), (
        f"the runner declares {capability}, so {point} is not impossible: record its fixture"
    )


def fixture_test(tests: Path, *, adapter: str) -> Callable[[str, Path], None]:
    """The pytest test an adapter's `test_run_state_fixtures.py` assigns to a module name.

    `tests/run_state_recipes.json` names the app and, for each of the five points,
    either its recipe (the fixture under its `fixtures` directory is resumed with the
    runner the app, or the point's own `app`, builds for the fixture's script) or,
    under `unsupported`, why the adapter cannot reach it (then the runner must
    declare that capability unsupported).
    """
    import pytest  # noqa: PLC0415 - only test modules call this; the package needs no pytest

    from dex_agents_testing.worker_apps import load_app  # noqa: PLC0415 - worker_apps is heavy

    recipe = json.loads((tests / "run_state_recipes.json").read_text())
    assert recipe["adapter"] == adapter, f"{tests}: the recipe is {recipe['adapter']!r}'s"
    apps = {
        point: load_app(tests / steps.get("app", recipe["app"]))
        for point, steps in recipe["points"].items()
    }
    default_app = load_app(tests / recipe["app"])
    directory = tests / recipe["fixtures"]
    recorded: Mapping[str, Any] = recipe["points"]
    unsupported: Mapping[str, str] = recipe.get("unsupported", {})
    both = sorted(set(recorded) & set(unsupported))
    neither = sorted(set(POINTS) - set(recorded) - set(unsupported))
    where = tests / "run_state_recipes.json"
    assert not both, f"{where}: points both recorded and unsupported: {both}"
    assert not neither, f"{where}: points neither recorded nor unsupported: {neither}"
    fixture_paths(directory, recorded)

    @pytest.mark.parametrize("point", POINTS)
    def test_a_stored_run_state_resumes_to_the_recorded_next_action(
        point: str, tmp_path: Path
    ) -> None:
        def build_runner(
            script: Sequence[Mapping[str, Any]],
        ) -> AbstractContextManager[AgentFrameworkRunner[Any]]:
            runner: AbstractContextManager[AgentFrameworkRunner[Any]]
            app = apps.get(point, default_app)
            runner = app.scripted_runner(script, str(tmp_path / "log.jsonl"))
            return runner

        if point in unsupported:
            check_point_unsupported(directory, point, unsupported[point], build_runner)
        else:
            check_run_state_fixture(
                directory / f"{point}.json", adapter=adapter, build_runner=build_runner
            )

    return test_a_stored_run_state_resumes_to_the_recorded_next_action
