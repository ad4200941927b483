"""The agent of the console tests: `dex-agents chat`'s demo agent (a scripted model that
looks an order up and refunds it after an approval), built by FactoryScenario."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents.chat import demo_agent

__all__ = ["demo"]


def demo(config: Mapping[str, Any]) -> AgentSessionFlow:
    return demo_agent.flow()
