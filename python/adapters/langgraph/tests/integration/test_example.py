"""The README's runnable example (python/examples/langgraph_example.py) exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "langgraph_example.py"


def test_example_runs_a_turn_with_a_read_tool_and_an_approved_write() -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    result = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # The example asserts the whole Step shape itself; the parallel middle has no fixed order.
    assert "Step shape: RunModel -> " in result.stdout
    assert "-> ResumeTurn -> RunModel" in result.stdout
    assert "issue_refund -> refunded 42.00 EUR for A-1001 (idempotency key langgraph-" in (
        result.stdout
    )
