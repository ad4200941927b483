"""dex-agents: AI agent sessions that run durably on Dex.

One Flow execution is one session; every model call and every tool call is
its own Dex Step. See `AgentSessionFlow`. These are the names an application
needs; an adapter for an agent framework imports `dex_agents.runner`.
"""

from __future__ import annotations

from dex_agents_contracts import ToolEffect

from dex_agents._remote.errors import RemoteRunnerError, RemoteRunnerUnavailableError
from dex_agents._remote.runner import RemoteRunner
from dex_agents._runner.policies import ToolPolicy
from dex_agents.client import AgentSessionClient
from dex_agents.errors import (
    AgentSessionError,
    AgentSessionRunError,
    ClientRequestIdReusedError,
    SessionAlreadyStartedError,
    SessionNotFoundError,
    SessionUnavailableError,
    UserError,
    ValueTooLarge,
)
from dex_agents.options import AgentSessionOptions, CompactionPolicy
from dex_agents.session import AgentSessionFlow
from dex_agents.tracing import TracingOptions
from dex_agents.worker import AgentWorker, agent_registry, run_worker

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # the Flow
    "AgentSessionFlow",
    # options and policies
    "AgentSessionOptions",
    "CompactionPolicy",
    "ToolPolicy",
    "ToolEffect",
    "TracingOptions",
    # client and worker
    "AgentSessionClient",
    "AgentWorker",
    "agent_registry",
    "run_worker",
    # runners served by another process (the runner service)
    "RemoteRunner",
    # errors
    "AgentSessionError",
    "UserError",
    "AgentSessionRunError",
    "SessionNotFoundError",
    "SessionAlreadyStartedError",
    "SessionUnavailableError",
    "ClientRequestIdReusedError",
    "ValueTooLarge",
    "RemoteRunnerError",
    "RemoteRunnerUnavailableError",
]
