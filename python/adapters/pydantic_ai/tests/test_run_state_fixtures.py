"""Run states stored by today's PydanticAiRunner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is `pai_app.py`'s agent with each
fixture's model script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dex_agents_testing import load_app
from dex_agents_testing.run_state_fixtures import check_run_state_fixture, fixture_paths

TESTS = Path(__file__).resolve().parent
APP = load_app(TESTS / "integration" / "pai_app.py")
# Pydantic AI has no handoffs; this adapter has no plan mode or compaction.
POINTS = ("awaiting_approval", "awaiting_tool_result")


@pytest.mark.parametrize(
    "fixture", fixture_paths(TESTS / "fixtures" / "run_states", POINTS), ids=lambda p: p.stem
)
def test_a_stored_run_state_resumes_to_the_recorded_next_action(
    fixture: Path, tmp_path: Path
) -> None:
    check_run_state_fixture(
        fixture,
        adapter="pydantic_ai",
        build_runner=lambda script: APP.scripted_runner(script, str(tmp_path / "log.jsonl")),
    )
