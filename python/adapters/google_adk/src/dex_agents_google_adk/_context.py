"""What a tool learns about the Dex Step it runs in, and the arguments the stubs see.

ADK's `ToolContext` belongs to the framework, so the runner keeps its per-Step
data in context variables: asyncio copies them into the tasks ADK starts for
parallel calls, so concurrent sessions in one Worker never see each other's data.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["DexRunInfo", "collecting_arguments", "dex_run_info", "record_arguments", "running"]


@dataclass(frozen=True, kw_only=True)
class DexRunInfo:
    """The Dex Step a tool call runs in."""

    flow_id: str
    """The session's Flow ID (the session ID)."""
    turn_id: str
    attempt: int
    """One-based attempt of the Step; a retried tool Step sees a higher number."""
    tool_call_id: str
    idempotency_key: str
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt."""


_RUN_INFO: ContextVar[DexRunInfo | None] = ContextVar("dex_google_adk_run_info", default=None)
_ARGUMENTS: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar(
    "dex_google_adk_arguments", default=None
)


def dex_run_info() -> DexRunInfo | None:
    """The Dex Step the calling tool runs in, or None outside an `AdkRunner` tool Step.

    Call it from a tool body; hand `idempotency_key` to the service a write calls,
    because a read or idempotent_write Step may run again.
    """
    return _RUN_INFO.get()


@contextlib.contextmanager
def running(info: DexRunInfo) -> Iterator[None]:
    token = _RUN_INFO.set(info)
    try:
        yield
    finally:
        _RUN_INFO.reset(token)


@contextlib.contextmanager
def collecting_arguments() -> Iterator[dict[str, dict[str, Any]]]:
    """The arguments each deferred stub received in this RunModel, by function call ID."""
    found: dict[str, dict[str, Any]] = {}
    token = _ARGUMENTS.set(found)
    try:
        yield found
    finally:
        _ARGUMENTS.reset(token)


def record_arguments(call_id: str, arguments: dict[str, Any]) -> None:
    found = _ARGUMENTS.get()
    if found is not None:
        found[call_id] = dict(arguments)
