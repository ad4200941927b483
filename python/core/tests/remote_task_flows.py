"""WorkerApp script of the remote tool-task and compaction tests: the session Flow on
a `RemoteRunner` of the sidecar's ScriptedTaskRunner (typescript/core/src/testing).

Compaction: a 1000-token window, compacting at 500 and keeping up to 200 tokens
unsummarized; the runner counts 100 tokens a message. `job_write` is a
single-attempt write that needs no approval, so a failing poll shows its
outcome_unknown route.
"""

from __future__ import annotations

import os
import sys

from dex_agents import (
    AgentSessionFlow,
    AgentSessionOptions,
    CompactionPolicy,
    RemoteRunner,
    ToolEffect,
    ToolPolicy,
)
from remote_flows import TARGET_VARIABLE, main

COMPACTION = CompactionPolicy(context_window_tokens=1000, trigger_ratio=0.5, retained_ratio=0.2)


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    del log_path, interrupt_deadline_seconds  # the sidecar logs the runs
    runner = RemoteRunner(os.environ[TARGET_VARIABLE], flow_type, connect_timeout=5.0)
    options = AgentSessionOptions(
        tool_policies={
            "job_write": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
        },
        compaction=COMPACTION,
    )
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(main(build=build_flow))
