"""Run states stored by today's claude_agent_sdk runner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is `claude_app.py`'s agent with each
fixture's model script.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dex_agents_testing import load_app
from dex_agents_testing.run_state_fixtures import check_run_state_fixture, fixture_paths

TESTS = Path(__file__).resolve().parent
APP = load_app(TESTS / "integration" / "claude_app.py")
# ClaudeAgentRunner has no plan mode or compaction; claude_app defines no subagents.
POINTS = ("awaiting_approval", "awaiting_tool_result")


@pytest.mark.parametrize(
    "fixture", fixture_paths(TESTS / "fixtures" / "run_states", POINTS), ids=lambda p: p.stem
)
def test_a_stored_run_state_resumes_to_the_recorded_next_action(
    fixture: Path, tmp_path: Path
) -> None:
    check_run_state_fixture(
        fixture,
        adapter="claude_agent_sdk",
        build_runner=lambda script: APP.scripted_runner(script, str(tmp_path / "log.jsonl")),
    )
