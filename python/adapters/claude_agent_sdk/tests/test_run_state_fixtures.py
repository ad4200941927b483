"""Run states stored by today's claude_agent_sdk runner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is the recipe's app (`claude_app.py`) with each
fixture's model script. A point the adapter cannot reach is under the recipe's
`unsupported`, with the reason, and the runner must declare that capability unsupported.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.run_state_fixtures import fixture_test

test_a_stored_run_state_resumes_to_the_recorded_next_action = fixture_test(
    Path(__file__).resolve().parent, adapter="claude_agent_sdk"
)
