"""Run-state fixtures: real stored run states that today's runner must still resume.

A fixture (`<adapter>/tests/fixtures/run_states/<point>.json`) holds the input
of a RunModel Step recorded from a real session on dexlite with a Worker process
(`RunnerTurnContext` wire JSON, with the framework's stored run state), the
model script for the resumed run and the next action the session really took.
`check_run_state_fixture` resumes one with the adapter's test app; the recorder
(`python -m dex_agents_testing.run_state_fixtures`) writes them.
"""

from dex_agents_testing.run_state_fixtures._check import (
    POINT_CAPABILITIES,
    RunnerFactory,
    check_point_unsupported,
    check_run_state_fixture,
    fixture_paths,
    fixture_test,
    resume,
)
from dex_agents_testing.run_state_fixtures._format import (
    POINTS,
    Point,
    RunStateFixture,
    normalise_outcome,
    read_fixture,
    run_state_sha256,
    write_fixture,
)
from dex_agents_testing.run_state_fixtures._script import ModelScript

__all__ = [
    "POINTS",
    "POINT_CAPABILITIES",
    "ModelScript",
    "Point",
    "RunStateFixture",
    "RunnerFactory",
    "check_point_unsupported",
    "check_run_state_fixture",
    "fixture_paths",
    "fixture_test",
    "normalise_outcome",
    "read_fixture",
    "resume",
    "run_state_sha256",
    "write_fixture",
]
