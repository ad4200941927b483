"""What a LangChain tool learns of its Dex tool Step, through its RunnableConfig."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

__all__ = ["DexToolContext"]

_CONFIG_KEY = "dex_tool_context"


@dataclass(frozen=True, kw_only=True)
class DexToolContext:
    """The tool call's identity; `idempotency_key` is the same on every attempt."""

    flow_id: str
    turn_id: str
    tool_call_id: str
    idempotency_key: str
    attempt: int

    def config(self) -> RunnableConfig:
        return {"configurable": {_CONFIG_KEY: asdict(self)}}

    @classmethod
    def from_config(cls, config: RunnableConfig | None) -> DexToolContext | None:
        """The context of a tool that declares a `config: RunnableConfig` parameter;
        None outside a Dex tool Step."""
        value: Any = ((config or {}).get("configurable") or {}).get(_CONFIG_KEY)
        if not isinstance(value, dict):
            return None
        return cls(**value)
