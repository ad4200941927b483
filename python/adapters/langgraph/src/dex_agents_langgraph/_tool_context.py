"""What a LangChain tool learns of its Dex tool Step, through its RunnableConfig."""

from __future__ import annotations

from typing import Any

from dex_agents.runner import DexRunInfo
from langchain_core.runnables import RunnableConfig

__all__ = ["DexToolContext"]

_CONFIG_KEY = "dex_tool_context"


class DexToolContext(DexRunInfo):
    """The kit's `DexRunInfo` of a tool Step; `idempotency_key` is the same on every attempt.

    `dex_run_info()` returns the same record inside the tool; the config carries it
    for a tool that reads its `RunnableConfig` instead.
    """

    def config(self) -> RunnableConfig:
        return {"configurable": {_CONFIG_KEY: self.to_json()}}

    @classmethod
    def from_config(cls, config: RunnableConfig | None) -> DexToolContext | None:
        """The context of a tool that declares a `config: RunnableConfig` parameter;
        None outside a Dex tool Step."""
        value: Any = ((config or {}).get("configurable") or {}).get(_CONFIG_KEY)
        return cls.from_json(value)
