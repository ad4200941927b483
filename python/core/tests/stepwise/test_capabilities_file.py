"""stepwise_capabilities.json, Stepwise's column of docs/adapters.md, is what
`StepwiseRunner.describe()` declares.

The table is assembled from every runner's file without importing any framework
(tools/capabilities); this test keeps the file true.
`tools/capabilities.sh python/core/stepwise_capabilities.json` rewrites it.
"""

from __future__ import annotations

from dex_agents.models import ScriptedModelClient
from dex_agents.stepwise import AgentDefinition, StepwiseRunner
from dex_agents_testing.capabilities import check_capabilities_file


def test_capabilities_json_is_what_describe_declares() -> None:
    runner = StepwiseRunner(AgentDefinition(model=ScriptedModelClient([])))
    check_capabilities_file(runner, "python/core/stepwise_capabilities.json")
