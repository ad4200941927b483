"""Stepwise sessions whose tools come from real MCP servers, for FactoryScenario Workers.

`flow(config)` runs in the test process (for the client) and in each Worker
child. The MCP servers come from `config["servers"]`, the Worker's own
configuration, never from anything a session carries. The model is rule based,
so a restarted Worker answers the same way:

- a user message `call <tool> <json arguments>` calls that tool (ID `c<n>`, n
  the number of user messages so far);
- after a tool result it answers `done: <result>`; anything else is `ok`.

Every model call logs the offered tool names to the RunLog (`model_call`).
The runner is the plain `StepwiseRunner`, which hands a Streamable HTTP
server's task to PollToolTask itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy
from dex_agents._runner.policies import tool_effect_named
from dex_agents.mcp import McpHttpServer, McpServerConfig, McpToolSource
from dex_agents.models import (
    ModelRequest,
    ModelResponse,
    ScriptedModelClient,
    ToolResultMessage,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, Tool
from dex_agents_testing import RunLog

from mcp_support import stdio_server

__all__ = ["flow", "server_config"]


def server_config(entry: Mapping[str, Any]) -> McpServerConfig:
    """`{"kind": "stdio", "name", "log", "variant"?}` or `{"kind": "http", "name", "url"}`."""
    if entry["kind"] == "http":
        return McpHttpServer(name=entry["name"], url=entry["url"])
    return stdio_server(entry["name"], Path(entry["log"]), entry.get("variant", "basic"))


class McpRuleModel:
    """A ModelClient answering by the rules of the module docstring."""

    def __init__(self, log: RunLog) -> None:
        self._log = log

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        self._log.append("model_call", tools=[tool.name for tool in request.tools], pid=os.getpid())
        last = messages[-1] if messages else None
        if isinstance(last, ToolResultMessage):
            entry = scripted_answer(f"done: {last.output}")
        elif isinstance(last, UserMessage) and last.text.startswith("call "):
            _, name, arguments = [*last.text.split(" ", 2), "{}"][:3]
            turn = sum(isinstance(m, UserMessage) for m in messages)
            entry = scripted_tool_calls((f"c{turn}", name, arguments))
        else:
            entry = scripted_answer("ok")
        return await ScriptedModelClient([entry]).complete(request)


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    source = McpToolSource(
        [server_config(entry) for entry in config.get("servers", ())],
        call_timeout=float(config.get("call_timeout", 60)),
    )
    own = [
        Tool(lambda: "own tool", name=name, description="An application tool.")
        for name in config.get("app_tools", ())
    ]
    definition = AgentDefinition(
        model=McpRuleModel(RunLog(str(config["log_path"]))),
        tools=own,
        tool_sources=[source],
    )
    policies = {
        name: ToolPolicy(
            effect=tool_effect_named(entry["effect"], tool_name=name, source="test"),
            requires_approval=entry.get("requires_approval"),
        )
        for name, entry in config.get("tool_policies", {}).items()
    }
    return AgentSessionFlow(
        StepwiseRunner(definition),
        flow_type=str(config["flow_type"]),
        options=AgentSessionOptions(tool_policies=policies),
    )


def call(tool: str, **arguments: object) -> str:
    """The user message that makes the model call `tool`."""
    return f"call {tool} {json.dumps(arguments)}"
