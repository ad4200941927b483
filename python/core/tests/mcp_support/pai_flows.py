"""Pydantic AI sessions whose tools come from real MCP servers (`McpSourceToolset`).

`flow(config)` is the FactoryScenario factory, with the rules of `flows.py`:
`call <tool> <json arguments>` calls that tool, a tool result is answered
`done: <result>`. The source logs each listing and each tool Step call to the
RunLog with the Worker's pid (`mcp_listing`, `mcp_call`), so a test can see
that a Worker ran a tool Step without listing first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents.mcp import McpTool, McpToolSource
from dex_agents.runner import DeferredToolExecution, DeferredToolOutcome
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_pydantic_ai.mcp import McpSourceToolset
from dex_agents_testing import RunLog
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mcp_support.flows import server_config

__all__ = ["flow"]


class _LoggedSource(McpToolSource):
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


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    last = messages[-1].parts[-1] if messages and messages[-1].parts else None
    if isinstance(last, ToolReturnPart):
        return ModelResponse(parts=[TextPart(content=f"done: {last.model_response_str()}")])
    if isinstance(last, UserPromptPart) and str(last.content).startswith("call "):
        _, name, arguments = [*str(last.content).split(" ", 2), "{}"][:3]
        turn = sum(
            isinstance(p, UserPromptPart)
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
        )
        return ModelResponse(
            parts=[ToolCallPart(name, json.loads(arguments), tool_call_id=f"c{turn}")]
        )
    return ModelResponse(parts=[TextPart(content="ok")])


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    log = RunLog(str(config["log_path"]))
    source = _LoggedSource(log, [server_config(entry) for entry in config.get("servers", ())])
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(_model),
        output_type=[str, DeferredToolRequests],
        toolsets=[McpSourceToolset(source)],
    )
    return AgentSessionFlow(PydanticAiRunner(agent), flow_type=str(config["flow_type"]))
