"""The Worker side of every TypeScript adapter's conformance app: the session Flow on a
`RemoteRunner` that reaches the adapter's Node sidecar (its src/testing/conformance_app.ts)
at `$DEX_CONFORMANCE_SIDECAR` under the Flow type. The tools, their policies and the
scripted model are the sidecar's, from the same data file; a `WorkerApp` script
(`dex_agents_testing.worker_apps`)."""

from __future__ import annotations

import os
import sys

from dex_agents import AgentSessionFlow, RemoteRunner
from dex_agents_testing.conformance import serve, session_options

SIDECAR_VARIABLE = "DEX_CONFORMANCE_SIDECAR"


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    return _flow(flow_type, log_path, interrupt_deadline_seconds)


def build_built_ins_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """The same runner in a session that enables every built-in tool: the session sends
    their definitions in each turn, and a runner that declares `built_in_tools` offers them."""
    return _flow(flow_type, log_path, interrupt_deadline_seconds, built_in_tools=True)


def build_structured_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """`build_flow`'s session: the sidecar, told the factory, answers with an agent whose
    output type is the data file's (a framework that fixes one per agent)."""
    return _flow(flow_type, log_path, interrupt_deadline_seconds)


def _flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None,
    *,
    built_in_tools: bool = False,
) -> AgentSessionFlow:
    del log_path  # the sidecar logs the runs
    runner = RemoteRunner(os.environ[SIDECAR_VARIABLE], flow_type, connect_timeout=5.0)
    options = session_options(interrupt_deadline_seconds, built_in_tools=built_in_tools)
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
