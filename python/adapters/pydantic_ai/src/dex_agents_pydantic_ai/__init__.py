"""dex-agents-pydantic-ai: Pydantic AI agents as durable Dex agent sessions (Step mode).

`PydanticAiRunner` lets a Pydantic AI `Agent` make one model call per RunModel
Step and defers every tool call to its own Dex Step.
"""

from __future__ import annotations

try:
    import pydantic_ai  # noqa: F401
except ImportError as _error:  # pragma: no cover - depends on the environment
    raise ImportError(
        "dex_agents_pydantic_ai needs Pydantic AI: install `dex-agents-pydantic-ai` "
        "(which brings `pydantic-ai-slim`), or `pip install pydantic-ai-slim`"
    ) from _error

from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import RunStateError

from dex_agents_pydantic_ai._built_ins import ReservedToolNameError
from dex_agents_pydantic_ai._context import DEX_METADATA_KEY, DexRunInfo, dex_run_info
from dex_agents_pydantic_ai._policies import DEX_EFFECT_METADATA_KEY
from dex_agents_pydantic_ai._runner import PydanticAiRunner

__all__ = [  # noqa: RUF022 - grouped by topic, as in dex_agents
    # runner
    "PydanticAiRunner",
    # tool context
    "DEX_EFFECT_METADATA_KEY",
    "DEX_METADATA_KEY",
    "DexRunInfo",
    "dex_run_info",
    # texts and errors
    "NO_RESULT_TEXT",
    "ReservedToolNameError",
    "RunStateError",
]
