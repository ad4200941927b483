"""WorkerApp script of the run-state recorder's plan and compaction points: the
conformance Flow on a `RemoteRunner` (ts_worker_app.py) with plan mode (and write_todos)
enabled, so a turn can plan, and a 1000-token window compacting at 500 (keeping up to
200 tokens), so a few turns are summarized.
"""

from __future__ import annotations

import dataclasses
import sys

from dex_agents import AgentSessionFlow, CompactionPolicy
from dex_agents_testing.conformance import serve
from ts_worker_app import build_flow as build_conformance_flow

COMPACTION = CompactionPolicy(context_window_tokens=1000, trigger_ratio=0.5, retained_ratio=0.2)


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    plain = build_conformance_flow(flow_type, log_path, interrupt_deadline_seconds)
    options = dataclasses.replace(
        plain.options,
        built_in_tools=("write_todos",),
        plan_mode_enabled=True,
        compaction=COMPACTION,
    )
    return AgentSessionFlow(plain.runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
