"""Stepwise: dex_agents' own agent loop, one model call per RunModel Step.

```python
from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents.models import ScriptedModelClient, scripted_answer
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import ToolEffect


def get_weather(city: str) -> str:
    return "sunny"  # the docstring, if any, becomes the tool's description


runner = StepwiseRunner(
    AgentDefinition(
        instructions="You answer weather questions.",
        tools=[tool(get_weather, policy=ToolPolicy(effect=ToolEffect.READ))],
        model=ScriptedModelClient([scripted_answer("Sunny.")]),
    )
)
flow = AgentSessionFlow(runner, flow_type="WeatherAgent")
```

Every tool call the model asks for is deferred to its own tool Step; the turn's
unstored items travel in the run state, and stored messages replay from their
`framework_item`. Stepwise also implements `UnfinishedTurnMessageBuilder`,
`ContextCompactionRunner` and `PlanModeRunner`.
"""

from __future__ import annotations

from dex_agents._runner.plan_mode import build_plan_note
from dex_agents.stepwise._continuation import (
    MAX_CONSECUTIVE_CONTINUATIONS,
    TurnContinuation,
    TurnContinuationContext,
    TurnContinuationDecision,
    TurnContinuationHook,
)
from dex_agents.stepwise._definition import (
    AgentDefinition,
    InstructionContext,
    Instructions,
    ModelResolver,
)
from dex_agents.stepwise._errors import InvalidModelResponseError, RunStateError, StepwiseError
from dex_agents.stepwise._runner import SUMMARY_PREFIX, StepwiseRunner
from dex_agents.stepwise._sources import ToolSource
from dex_agents.stepwise._tools import Tool, ToolContext, tool

__all__ = [
    "MAX_CONSECUTIVE_CONTINUATIONS",
    "SUMMARY_PREFIX",
    "AgentDefinition",
    "InstructionContext",
    "Instructions",
    "InvalidModelResponseError",
    "ModelResolver",
    "RunStateError",
    "StepwiseError",
    "StepwiseRunner",
    "Tool",
    "ToolContext",
    "ToolSource",
    "TurnContinuation",
    "TurnContinuationContext",
    "TurnContinuationDecision",
    "TurnContinuationHook",
    "build_plan_note",
    "tool",
]
