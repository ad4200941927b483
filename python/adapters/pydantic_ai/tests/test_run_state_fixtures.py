"""Run states stored by today's PydanticAiRunner still resume to the recorded next action.

The fixtures were recorded from real sessions on dexlite with a Worker process
(`python -m dex_agents_testing.run_state_fixtures tests/run_state_recipes.json`);
this test only reads them. The runner is `pai_app.py`'s agent with each
fixture's model script.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.run_state_fixtures import fixture_test

# Pydantic AI has no handoffs; this adapter has no plan mode or compaction.
test_a_stored_run_state_resumes_to_the_recorded_next_action = fixture_test(
    Path(__file__).resolve().parent,
    "pai_app.py",
    adapter="pydantic_ai",
    points=("awaiting_approval", "awaiting_tool_result"),
)
