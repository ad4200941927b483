"""The conformance app's agent with the jobs MCP server as a logged source (a
`WorkerApp` script).

`McpSourceToolset` hands an MCP call's tool Step to the `McpToolSource` whole. The
source logs each listing and each tool Step call to the app's log with the Worker's
pid (`mcp_listing`, `mcp_call`), so a test sees that a Worker ran a tool Step
without listing first. The jobs server is the one the test started
(`dex_agents_testing.mcp_jobs`, its URL in `JOBS_URL_ENV`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents.mcp import McpHttpServer, McpTool, McpToolSource
from dex_agents.runner import DeferredToolExecution, DeferredToolOutcome
from dex_agents_testing import RunLog, load_app
from dex_agents_testing.conformance import JOBS_URL_ENV, serve

PAI_APP = Path(__file__).resolve().parent / "pai_app.py"


class LoggedSource(McpToolSource):
    """An `McpToolSource` that logs its listings and tool Step calls with the pid."""

    def __init__(self, log: RunLog, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._log = log

    async def list_tools(
        self, *, taken: Sequence[str] = (), refresh: bool = False
    ) -> list[McpTool]:
        if not self.tools or refresh:
            self._log.append("mcp_listing", pid=os.getpid())
        return await super().list_tools(taken=taken, refresh=refresh)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        self._log.append("mcp_call", pid=os.getpid(), tool=call.tool_call.tool_name)
        return await super().execute_deferred_tool_call(call)


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    def source(mcp_log: Path) -> McpToolSource:
        jobs = McpHttpServer(name="jobs", url=os.environ[JOBS_URL_ENV])
        return LoggedSource(RunLog(log_path), [jobs])

    flow: AgentSessionFlow = load_app(PAI_APP).build_flow(
        flow_type, log_path, interrupt_deadline_seconds, mcp=source
    )
    return flow


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
