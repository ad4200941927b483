"""The Worker side of every TypeScript adapter's conformance app: the session Flow on a
`RemoteRunner` that reaches the adapter's Node sidecar (its src/testing/conformance_app.ts)
at `$DEX_CONFORMANCE_SIDECAR` under the Flow type. The tools, their policies and the
scripted model are the sidecar's, from the same data file; a `WorkerApp` script
(`dex_agents_testing.worker_apps`)."""

from __future__ import annotations

import os
import sys

from dex_agents import AgentSessionFlow, AgentSessionOptions, RemoteRunner
from dex_agents_testing.conformance import deadline, serve

SIDECAR_VARIABLE = "DEX_CONFORMANCE_SIDECAR"


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    del log_path  # the sidecar logs the runs
    runner = RemoteRunner(os.environ[SIDECAR_VARIABLE], flow_type, connect_timeout=5.0)
    options = AgentSessionOptions(interrupt_deadline=deadline(interrupt_deadline_seconds))
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
