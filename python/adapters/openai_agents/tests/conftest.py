"""The unit tests run without tracing exports (no key, no network)."""

from __future__ import annotations

from agents import set_tracing_disabled

set_tracing_disabled(True)
