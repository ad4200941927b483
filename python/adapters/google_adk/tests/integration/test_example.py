"""The README's runnable example (python/examples/google_adk_example.py) exits 0."""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.adapter_suites import check_refund_example

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "google_adk_example.py"


def test_example_runs_a_turn_with_a_read_tool_and_an_approved_write() -> None:
    check_refund_example(EXAMPLE, "google-adk")
