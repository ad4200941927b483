"""dex-agents-openai-agents: OpenAI Agents SDK agents as durable Dex agent sessions (Step mode).

`OpenAiAgentsRunner` lets an `agents.Agent` make one model call per RunModel
Step (more when it hands off) and defers every function tool call to its own
Dex Step.
"""

from __future__ import annotations

try:
    import agents  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "dex_agents_openai_agents needs the OpenAI Agents SDK: install "
        "`dex-agents-openai-agents` (which brings `openai-agents`), or `pip install openai-agents`"
    ) from _error

from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import DexRunInfo, RunStateError, dex_run_info

from dex_agents_openai_agents._runner import HANDOFF_EVENT, OpenAiAgentsRunner

__all__ = [  # noqa: RUF022 - grouped by topic, as in dex_agents
    # runner
    "OpenAiAgentsRunner",
    # tool context
    "DexRunInfo",
    "dex_run_info",
    # events, texts and errors
    "HANDOFF_EVENT",
    "NO_RESULT_TEXT",
    "RunStateError",
]
