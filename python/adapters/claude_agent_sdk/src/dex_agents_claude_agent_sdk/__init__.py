"""Claude Agent SDK agents as durable Dex agent sessions (the whole-turn harness).

`ClaudeAgentRunner(options, tools=..., tool_policies=..., default_tool_effect=...)`
plugs a `ClaudeAgentOptions` agent into `dex_agents.AgentSessionFlow`: each turn
runs inside one RunModel Step, inline reads included, and every other call of a
tool the runner owns runs in its own tool Step.
"""

from __future__ import annotations

from dex_agents_claude_agent_sdk._runner import DEFAULT_MAX_TURNS, ClaudeAgentRunner, session_uuid
from dex_agents_claude_agent_sdk._tools import current_tool_execution

__all__ = ["DEFAULT_MAX_TURNS", "ClaudeAgentRunner", "current_tool_execution", "session_uuid"]
