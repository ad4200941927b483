"""What a tool learns about the Dex Step it runs in, and the stored results of a turn.

The SDK's run context belongs to the application (`context_factory`), so the
runner keeps its own per-Step data in context variables instead: asyncio copies
them into the tasks the SDK starts for tool calls, so concurrent sessions in one
Worker never see each other's data.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["DexRunInfo", "dex_run_info", "running", "stored_result", "with_stored_results"]


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


_RUN_INFO: ContextVar[DexRunInfo | None] = ContextVar("dex_openai_agents_run_info", default=None)
_STORED_RESULTS: ContextVar[Mapping[str, str] | None] = ContextVar(
    "dex_openai_agents_stored_results", default=None
)


def dex_run_info() -> DexRunInfo | None:
    """The Dex Step the calling tool runs in, or None outside `OpenAiAgentsRunner`.

    Call it from a tool body; use `idempotency_key` to make a write safe to repeat,
    because a read or idempotent_write Step may run again.
    """
    return _RUN_INFO.get()


@contextlib.contextmanager
def running(info: DexRunInfo) -> Iterator[None]:
    """Makes `info` what `dex_run_info` returns for the duration of the block."""
    token = _RUN_INFO.set(info)
    try:
        yield
    finally:
        _RUN_INFO.reset(token)


@contextlib.contextmanager
def with_stored_results(results: Mapping[str, str]) -> Iterator[None]:
    """The model-visible results of the turn's final tool calls, by tool call ID."""
    token = _STORED_RESULTS.set(results)
    try:
        yield
    finally:
        _STORED_RESULTS.reset(token)


def stored_result(tool_name: str, tool_call_id: str) -> str:
    """The stored result a gated tool returns in a RunModel Step instead of running."""
    results = _STORED_RESULTS.get()
    if results is None or tool_call_id not in results:
        # Only an approved interruption reaches a gated tool, and the runner approves
        # only calls whose record is final, so this is a bug, never a model mistake.
        raise RuntimeError(
            f"tool {tool_name!r} (call {tool_call_id!r}) was about to run inside a RunModel "
            "Step without a stored Dex result; OpenAiAgentsRunner runs tools only in tool Steps"
        )
    return results[tool_call_id]
