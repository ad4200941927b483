"""The Worker side of every TypeScript adapter's conformance app: the session Flow on a
`RemoteRunner` that reaches the adapter's Node sidecar (its src/testing/conformance_app.ts)
at `$DEX_CONFORMANCE_SIDECAR` under the Flow type. The tools, their policies and the
scripted model are the sidecar's, from the same data file; a `WorkerApp` script
(`dex_agents_testing.worker_apps`)."""

from __future__ import annotations

import os
import sys

from dex_agents import AgentSessionFlow, RemoteRunner
from dex_agents_testing.conformance import McpSourceFactory, serve, session_options

SIDECAR_VARIABLE = "DEX_CONFORMANCE_SIDECAR"


def build_flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
    plan_mode: bool = False,
) -> AgentSessionFlow:
    """The session on the sidecar's runner; a case's flow enables the built-ins (the
    session sends their definitions each turn; a runner that declares `built_in_tools`
    offers them) or plan mode. MCP sources are Python objects of the Worker's Flow, so
    the MCP flows are for Python runners only."""
    if mcp is not None:
        raise ValueError("a TypeScript adapter's runner takes no Python MCP source")
    return _flow(
        flow_type, interrupt_deadline_seconds, built_in_tools=built_in_tools, plan_mode=plan_mode
    )


def build_structured_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """`build_flow`'s session: the sidecar, told the factory, answers with an agent whose
    output type is the data file's (a framework that fixes one per agent)."""
    return _flow(flow_type, interrupt_deadline_seconds)


def _flow(
    flow_type: str,
    interrupt_deadline_seconds: float | None,
    *,
    built_in_tools: bool = False,
    plan_mode: bool = False,
) -> AgentSessionFlow:
    runner = RemoteRunner(os.environ[SIDECAR_VARIABLE], flow_type, connect_timeout=5.0)
    options = session_options(
        interrupt_deadline_seconds, built_in_tools=built_in_tools, plan_mode=plan_mode
    )
    return AgentSessionFlow(runner, flow_type=flow_type, options=options)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
