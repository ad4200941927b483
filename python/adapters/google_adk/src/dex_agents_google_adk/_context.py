"""The arguments ADK handed the deferred stubs in one RunModel Step.

ADK's `ToolContext` belongs to the framework, so the runner keeps its per-Step
data in context variables: asyncio copies them into the tasks ADK starts for
parallel calls, so concurrent sessions in one Worker never see each other's
data. (A tool's own Step is the kit's `dex_run_info()`.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["collecting_arguments", "record_arguments"]

_ARGUMENTS: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar(
    "dex_google_adk_arguments", default=None
)


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
