"""The one import for adapter authors: the runner protocol and the kit every adapter needs.

A runner makes exactly one model call per `run_model_step` and runs no tool it
can defer; the session runs every tool call in its own Step through
`execute_deferred_tool_call`. Everything that crosses this boundary is plain
data (plus the event writer and heartbeat callbacks), so a runner in another
process can implement it behind a service.

A runner declares what it supports with `describe()`, built with
`declare_capabilities`: every capability of `RunnerCapabilities` either
supported or given the reason it is not. The session calls an optional method
(`poll_tool_task`, `cancel_tool_task`, compaction, ...) only when its
capability is declared; those methods' protocols and inputs (`ToolTaskPoll`,
`ContextSummaryRequest`, ...) are in `dex_agents._runner.capabilities`.

The kit every adapter builds on: the Step a tool runs in (`DexRunInfo`,
`running`, `dex_run_info`), heartbeats, routing a response's calls to their
policies (`ToolRouter`), the results of paused calls (`PendingCall`,
`result_texts`), tool values (`parse_tool_arguments`, `tool_output_text`), MCP
tool sources (`McpSources`), the versioned run-state envelope (`RunStateFormat`)
and the shared errors (`RunStateError`, `FrameworkItemError`).

Only what an adapter author needs is here (the pin is tests/test_public_api.py).
The event writer lives in `dex_agents.events`, the offline doubles
(`FakeSession`, ...) in `dex_agents.offline`, the texts the model sees for final
tool calls in `dex_agents.results`; the core's own helpers stay in
`dex_agents._runner`.
"""

from __future__ import annotations

from dex_agents_contracts import RunnerCapabilities

from dex_agents._runner.call_results import PendingCall, result_texts
from dex_agents._runner.declared import declare_capabilities
from dex_agents._runner.errors import FrameworkItemError, RunStateError
from dex_agents._runner.heartbeats import heartbeats
from dex_agents._runner.mcp_sources import McpSources
from dex_agents._runner.protocol import AgentFrameworkRunner
from dex_agents._runner.routing import ToolRouter
from dex_agents._runner.run_info import DexRunInfo, dex_run_info, running
from dex_agents._runner.run_state import RunStateFormat
from dex_agents._runner.tool_values import parse_tool_arguments, tool_output_text
from dex_agents._runner.values import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolCall,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ModelCallMetadata,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    ToolInputRequested,
    ToolTaskStarted,
    TurnCompleted,
    TurnContinued,
)

__all__ = [  # noqa: RUF022 - grouped by comment headers (docs/style.md)
    # the protocol
    "AgentFrameworkRunner",
    "AgentTurnContext",
    "AgentTurnOutcome",
    "TurnCompleted",
    "ToolCallsRequested",
    "TurnContinued",
    "FrameworkMessage",
    "ModelCallMetadata",
    # tool execution
    "DeferredToolCall",
    "DeferredToolExecution",
    "DeferredToolOutcome",
    "ToolExecutionResult",
    "ToolExecutionError",
    "ToolInputRequested",
    "ToolTaskStarted",
    # declared capabilities
    "RunnerCapabilities",
    "declare_capabilities",
    # the kit: the Step a call runs in, routing, paused calls, MCP, run state, errors
    "DexRunInfo",
    "dex_run_info",
    "running",
    "heartbeats",
    "ToolRouter",
    "PendingCall",
    "result_texts",
    "parse_tool_arguments",
    "tool_output_text",
    "McpSources",
    "RunStateFormat",
    "RunStateError",
    "FrameworkItemError",
]
