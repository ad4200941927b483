"""Run states stored by today's langgraph runner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is `lg_app.py`'s agent with each
fixture's model script.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.run_state_fixtures import fixture_test

# LangGraphRunner has no plan mode or compaction; lg_app has no subgraph agent (see the README).
test_a_stored_run_state_resumes_to_the_recorded_next_action = fixture_test(
    Path(__file__).resolve().parent,
    "lg_app.py",
    adapter="langgraph",
    points=("awaiting_approval", "awaiting_tool_result"),
)
