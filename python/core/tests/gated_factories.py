"""Scenario sessions whose waiting question is held by a gate file (FactoryScenario).

A question's deadline normally passes only as its Timer fires, which gives
answer_question no moment to see it expired. Holding the waiting
AwaitQuestionAnswer's WaitFor until the test opens the gate lets the deadline
pass while the question is still pending and PendingInterrupts is unlocked.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dex import AsyncContext, StepList, Wait
from dex_agents import AgentSessionFlow
from dex_agents.session._steps.questions import AwaitQuestionAnswer
from dex_agents_contracts import AgentSessionStartInput
from dex_agents_testing import Scenario

__all__ = ["build_gated_question_flow"]


class _GatedQuestionFlow(AgentSessionFlow):
    gate: str = ""

    def get_steps(self) -> StepList[AgentSessionStartInput]:
        steps = super().get_steps()
        for definition in steps:
            if isinstance(definition.step, AwaitQuestionAnswer):
                _hold_pending_waits(definition.step, Path(self.gate))
        return steps


def _hold_pending_waits(step: AwaitQuestionAnswer, gate: Path) -> None:
    unheld = step.wait_for

    async def wait_for(context: AsyncContext, input: str) -> Wait:
        if step._runtime.interrupts(context):  # a raised question waits: hold it
            while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        return await unheld(context, input)

    step.wait_for = wait_for  # type: ignore[method-assign]


def build_gated_question_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    """config: `scenario` (a saved Scenario), `gate`, and the harness's flow_type/log_path."""
    scenario = dataclasses.replace(
        Scenario.load(config["scenario"]),
        flow_type=config["flow_type"],
        log_path=config["log_path"],
    )
    flow = _GatedQuestionFlow(
        scenario.runner(), flow_type=scenario.flow_type, options=scenario.options()
    )
    flow.gate = str(config["gate"])
    return flow
