"""dex-agents-google-adk: Google ADK agents as durable Dex agent sessions (Step mode).

`AdkRunner` lets an ADK agent make one model call per RunModel Step (more when
it transfers to another agent) and defers every function tool call to its own
Dex Step.
"""

from __future__ import annotations

try:
    import google.adk  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "dex_agents_google_adk needs Google ADK: install `dex-agents-google-adk` "
        "(which brings `google-adk`), or `pip install google-adk`"
    ) from _error

from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import DexRunInfo, RunStateError, dex_run_info

from dex_agents_google_adk._runner import TRANSFER_EVENT, AdkRunner

__all__ = [  # noqa: RUF022 - grouped by topic, as in dex_agents
    # runner
    "AdkRunner",
    # tool context
    "DexRunInfo",
    "dex_run_info",
    # events, texts and errors
    "NO_RESULT_TEXT",
    "RunStateError",
    "TRANSFER_EVENT",
]
