"""WorkerApp script of the run-state recorder's compaction point: the conformance Flow
on a `RemoteRunner` (ts_worker_app.py) with a 1000-token window compacting at 500
(keeping up to 200 tokens), so a few turns are summarized. (The plan point serves the
conformance `plan_mode` flow.)
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
    options = dataclasses.replace(plain.options, compaction=COMPACTION)
    return AgentSessionFlow(plain.runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
