"""The agent the chat tests talk to: the HTTP tests' command model (http_flows), a
`deploy` tool that waits for approval with a 10-minute deadline, and the model's gates
in the directory `DEX_AGENTS_CHAT_GATES` names (the Worker child inherits it)."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import ToolEffect
from http_flows import CommandModel

__all__ = ["agent"]


def agent() -> AgentSessionFlow:
    @tool
    def deploy(target: str = "") -> str:
        """Deploys.

        Args:
            target: Where to deploy.
        """
        return f"deployed to {target}"

    model = CommandModel(Path(os.environ.get("DEX_AGENTS_CHAT_GATES", "/nonexistent")))
    definition = AgentDefinition(model_resolver=lambda settings: model, tools=[deploy])
    options = AgentSessionOptions(
        tool_policies={
            "deploy": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True)
        },
        interrupt_deadline=timedelta(minutes=10),
    )
    return AgentSessionFlow(StepwiseRunner(definition), flow_type="ChatTestAgent", options=options)
