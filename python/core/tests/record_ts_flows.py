"""WorkerApp script of the run-state recorder's plan and compaction points: the matrix
Flow on a `RemoteRunner` (remote_flows.py) with plan mode (and write_todos) enabled,
so a turn can plan, and a 1000-token window compacting at 500 (keeping up to 200 tokens), so a
few matrix turns are summarized.
"""

from __future__ import annotations

import dataclasses
import sys

from dex_agents import AgentSessionFlow, CompactionPolicy
from remote_flows import build_flow as build_matrix_flow
from remote_flows import main

COMPACTION = CompactionPolicy(context_window_tokens=1000, trigger_ratio=0.5, retained_ratio=0.2)


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    matrix = build_matrix_flow(flow_type, log_path, interrupt_deadline_seconds)
    options = dataclasses.replace(
        matrix.options,
        built_in_tools=("write_todos",),
        plan_mode_enabled=True,
        compaction=COMPACTION,
    )
    return AgentSessionFlow(matrix.runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(main(build=build_flow))
