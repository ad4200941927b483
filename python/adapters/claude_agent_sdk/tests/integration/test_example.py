"""The README's runnable example (python/examples/claude_agent_sdk_example.py) exits 0."""

from __future__ import annotations

from pathlib import Path

from dex_agents_testing.adapter_suites import check_refund_example

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "claude_agent_sdk_example.py"


def test_example_runs_a_turn_with_an_inline_read_and_an_approved_write() -> None:
    stdout = check_refund_example(EXAMPLE, "claude-agent-sdk")
    assert "Step shape: RunModel -> AwaitToolApproval -> CallSingleAttemptTool" in stdout
