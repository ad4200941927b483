"""The Dex Step a model call or tool call runs in, as application code sees it.

A tool body asks `dex_run_info()` for its idempotency key. The runner sets it
with `running(...)` around the framework's call; it is a context variable, so
asyncio copies it into the tasks a framework starts for parallel calls, and
concurrent sessions in one Worker never see each other's Step.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Self

from dex_agents._runner.values import AgentTurnContext, DeferredToolExecution

__all__ = ["DexRunInfo", "dex_run_info", "running"]


@dataclass(frozen=True, kw_only=True)
class DexRunInfo:
    """The Dex Step a model call or tool call runs in."""

    flow_id: str
    """The session's Flow ID (the session ID)."""
    turn_id: str
    attempt: int
    """One-based attempt of the Step; a retried tool Step sees a higher number."""
    tool_call_id: str | None = None
    """Set in a tool Step only."""
    idempotency_key: str | None = None
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt; set in a tool Step only."""
    tool_source_reference: str | None = None
    """The call record's reference, for a tool a tool source made (MCP); tool Step only."""

    @classmethod
    def of_model_step(cls, turn: AgentTurnContext) -> Self:
        return cls(flow_id=turn.flow_id, turn_id=turn.turn_id, attempt=turn.attempt)

    @classmethod
    def of_tool_step(cls, call: DeferredToolExecution) -> Self:
        return cls(
            flow_id=call.flow_id,
            turn_id=call.turn_id,
            attempt=call.attempt,
            tool_call_id=call.tool_call.tool_call_id,
            idempotency_key=call.idempotency_key,
            tool_source_reference=call.tool_call.tool_source_reference,
        )

    def to_json(self) -> dict[str, object]:
        """A plain object, for frameworks that carry it in their own metadata or config."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: object) -> Self | None:
        """The info `to_json` wrote; None for anything else (a call outside Dex)."""
        if not isinstance(data, Mapping):
            return None
        flow_id, turn_id, attempt = data.get("flow_id"), data.get("turn_id"), data.get("attempt")
        if not (isinstance(flow_id, str) and isinstance(turn_id, str) and isinstance(attempt, int)):
            return None

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            flow_id=flow_id,
            turn_id=turn_id,
            attempt=attempt,
            tool_call_id=text("tool_call_id"),
            idempotency_key=text("idempotency_key"),
            tool_source_reference=text("tool_source_reference"),
        )


_RUN_INFO: ContextVar[DexRunInfo | None] = ContextVar("dex_agents_run_info", default=None)


def dex_run_info() -> DexRunInfo | None:
    """The Dex Step the calling code runs in, or None outside a runner's Step.

    Call it from a tool body; hand `idempotency_key` to the service a write
    calls, because a read or idempotent_write Step may run again.
    """
    return _RUN_INFO.get()


@contextlib.contextmanager
def running(info: DexRunInfo) -> Iterator[DexRunInfo]:
    """Makes `info` what `dex_run_info` returns for the duration of the block."""
    token = _RUN_INFO.set(info)
    try:
        yield info
    finally:
        _RUN_INFO.reset(token)
