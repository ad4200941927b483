"""A case's `flow` as the keyword arguments of the app's one factory, `build_flow`.

An app factory module has one `build_flow(flow_type, log_path,
interrupt_deadline_seconds, *, built_in_tools=False, mcp=None)` (and `plan_mode=False`
where its runner declares plan mode); a case whose
`flow` is one of `FLOWS` runs on it with that flow's options, in the test process
(`CaseApp`, for the client) and in the Worker (`--flow FLOW`), so each variant of
an app's agent is spelled once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents.mcp import McpToolSource

from dex_agents_testing.conformance._cases import CasesError
from dex_agents_testing.conformance._script import jobs_source
from dex_agents_testing.mcp_notes import notes_source
from dex_agents_testing.worker_apps import WorkerApp, load_app

__all__ = ["FLOW_OPTIONS", "CaseApp", "McpSourceFactory", "build_app_flow", "flow_options"]

McpSourceFactory = Callable[[Path], McpToolSource]
"""`build_flow`'s `mcp`: makes the MCP source from the app's MCP log path
(`ScriptedApp.mcp_log`)."""


def _jobs(mcp_log: Path) -> McpToolSource:
    return jobs_source()


FLOW_OPTIONS: dict[str, dict[str, Any]] = {
    "built_ins": {"built_in_tools": True},
    "mcp": {"mcp": notes_source},
    "mcp_tasks": {"mcp": _jobs},
    "plan_mode": {"plan_mode": True},
}
"""Each of `FLOWS` as `build_flow`'s keyword arguments."""


def flow_options(flow: str | None) -> dict[str, Any]:
    """What `flow` (a key of `FLOWS`, or None for the plain agent) adds to `build_flow`'s call."""
    if flow is None:
        return {}
    if flow not in FLOW_OPTIONS:
        raise CasesError(f"no app flow {flow!r}; the flows are {sorted(FLOW_OPTIONS)}")
    return FLOW_OPTIONS[flow]


def build_app_flow(
    module: Any,
    factory: str,
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None,
    *,
    flow: str | None = None,
) -> AgentSessionFlow:
    """`module`'s `factory` (`build_flow`, or one the app's traits name), with `flow`'s
    options."""
    build: Callable[..., AgentSessionFlow] = getattr(module, factory)
    return build(flow_type, log_path, interrupt_deadline_seconds, **flow_options(flow))


@dataclass
class CaseApp(WorkerApp):
    """A `WorkerApp` serving a case's flow: its Worker gets `--flow FLOW`."""

    flow: str | None = None

    def build_flow(self) -> AgentSessionFlow:
        return build_app_flow(
            load_app(self.script),
            self.factory,
            self.flow_type,
            str(self.log_path),
            self.interrupt_deadline,
            flow=self.flow,
        )

    def worker_arguments(self) -> list[str]:
        flow = ["--flow", self.flow] if self.flow is not None else []
        return [*super().worker_arguments(), *flow]
