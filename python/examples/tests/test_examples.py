"""Each runnable example exits 0; the demo also prints its turn's Step shape."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent
OWN_VENV = {"google_adk_example.py", "claude_agent_sdk_example.py"}
"""Examples of adapters with a virtualenv of their own; the adapter's suite runs them
(//python/adapters/google_adk:google_adk_cases_test,
//python/adapters/claude_agent_sdk:claude_agent_sdk_example_test)."""


def _run(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_demo_runs_a_turn_with_a_read_tool_and_an_approved_write() -> None:
    result = _run("demo.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "turn_completed" in result.stdout
    lines = result.stdout.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("Step shape"))
    steps = lines[heading + 1].strip().split(" -> ")
    # The read tool and the approval wait run in parallel: their order varies.
    assert steps[0] == "RunModel"
    assert steps[-2:] == ["ResumeTurn", "RunModel"]
    assert sorted(steps[1:-2]) == ["AwaitToolApproval", "CallSingleAttemptTool", "CallTool"]


def test_demo_trace_prints_the_span_tree() -> None:
    result = _run("demo.py", "--trace")
    assert result.returncode == 0, result.stdout + result.stderr
    tree = result.stdout.split("\nSpans ", 1)[1]
    assert tree.count("invoke_agent SupportAgent [INTERNAL]") == 2  # the start and the approval
    assert tree.count("chat scripted [CLIENT]") == 2
    assert "execute_tool get_order [INTERNAL]" in tree
    assert "execute_tool issue_refund [INTERNAL]" in tree
    assert "linked to the root of trace" in tree


@pytest.mark.parametrize(
    "script",
    sorted(p.name for p in EXAMPLES.glob("*_example.py") if p.name not in OWN_VENV),
)
def test_example_runs(script: str) -> None:
    result = _run(script)
    assert result.returncode == 0, result.stdout + result.stderr
