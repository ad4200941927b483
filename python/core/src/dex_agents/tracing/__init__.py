"""OpenTelemetry GenAI spans for agent sessions (design "Tracing"), behind `dex-agents[otel]`.

Importing this package never imports OpenTelemetry: only enabling tracing on a
Worker or a Flow does (`SessionTracing.configure`), so the core runs without
the extra. The spans, their names and every attribute are in the README.
"""

from __future__ import annotations

from dex_agents.tracing._options import (
    CONVENTIONS_1_36,
    CONVENTIONS_CURRENT,
    Conventions,
    TracingOptions,
)
from dex_agents.tracing._session import ModelCallTrace, SessionTracing, ToolCallTrace

__all__ = [
    "CONVENTIONS_1_36",
    "CONVENTIONS_CURRENT",
    "Conventions",
    "ModelCallTrace",
    "SessionTracing",
    "ToolCallTrace",
    "TracingOptions",
]
