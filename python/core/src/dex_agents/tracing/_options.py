"""TracingOptions: whether a Worker's sessions emit spans, to which provider, and how.

Plain data with no OpenTelemetry import, so options can be built (and a Worker
configured) on a machine without the `otel` extra; only enabling them loads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from dex_agents.errors import UserError

__all__ = ["CONVENTIONS_1_36", "CONVENTIONS_CURRENT", "Conventions", "TracingOptions"]

Conventions = Literal["current", "1.36.0"]
CONVENTIONS_CURRENT: Conventions = "current"
"""The GenAI conventions the design pins (schema 1.42.0-dev): the default."""
CONVENTIONS_1_36: Conventions = "1.36.0"
"""Semantic conventions 1.36.0, for backends that only read `gen_ai.system`."""


@dataclass(frozen=True, kw_only=True)
class TracingOptions:
    """Spans for every activation, model call and tool call (design "Tracing").

    Content is by reference (message sequences, tool call IDs) unless
    `capture_content` is set; the 1.36.0 profile never captures content, since
    that version carried it in log events rather than span attributes.
    """

    enabled: bool = True
    tracer_provider: Any = None
    """An `opentelemetry.trace.TracerProvider`; None uses the global one."""
    conventions: Conventions = CONVENTIONS_CURRENT
    capture_content: bool = False
    """Put message text, tool arguments and tool output on the spans (opt-in)."""
    agent_name: str | None = None
    """`gen_ai.agent.name` and the root's name; None uses the Flow type."""

    def __post_init__(self) -> None:
        if self.conventions not in (CONVENTIONS_CURRENT, CONVENTIONS_1_36):
            raise UserError(
                f"`conventions` {self.conventions!r} must be "
                f"{CONVENTIONS_CURRENT!r} or {CONVENTIONS_1_36!r}"
            )
        if self.agent_name is not None and (
            not isinstance(self.agent_name, str) or not self.agent_name.strip()
        ):
            raise UserError("`agent_name` must be a non-empty string, or None")
        if self.capture_content and self.conventions == CONVENTIONS_1_36:
            raise UserError(
                "`capture_content` needs conventions 'current': 1.36.0 carried content "
                "in log events, which dex-agents does not write"
            )
