"""Run states stored by today's google_adk runner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is `adk_app.py`'s agent with each
fixture's model script.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.run_state_fixtures import fixture_test

# AdkRunner has no plan mode or compaction (no PlanModeRunner, no ContextCompactionRunner).
test_a_stored_run_state_resumes_to_the_recorded_next_action = fixture_test(
    Path(__file__).resolve().parent,
    "adk_app.py",
    adapter="google_adk",
    points=("after_handoff", "awaiting_approval", "awaiting_tool_result"),
)
