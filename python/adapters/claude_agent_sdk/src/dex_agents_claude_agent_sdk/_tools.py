"""The tools the runner can run itself, and the in-process servers the CLI calls them through.

Only a tool whose body the runner holds can be deferred into a tool Step: the
SDK MCP tools given to `ClaudeAgentRunner(tools=...)` and the tools of an
`McpToolSource`. Each is served to the CLI by an in-process SDK MCP server the
runner builds for every run, whose handler returns a call's recorded result
when the turn already ran it in its own Step (the CLI re-runs a deferred call
when it resumes), and runs the real body only for an inline read. The session's
enabled built-in tools are served the same way (`BUILT_IN_SERVER`), with the
core's definitions; the session runs them, so their handler only ever answers
from the record.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from claude_agent_sdk import McpSdkServerConfig, SdkMcpTool, create_sdk_mcp_server
from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS
from dex_agents._runner.policies import BuiltInToolName, tool_effect_from_annotations
from dex_agents.results import model_visible_result
from dex_agents.runner import (
    DeferredToolExecution,
    DeferredToolOutcome,
    DexRunInfo,
    ToolExecutionError,
    ToolExecutionResult,
    parse_tool_arguments,
    running,
)
from dex_agents_contracts import AgentToolCall, ToolCallStatus, ToolEffect

if TYPE_CHECKING:
    from dex_agents.mcp import McpTool, McpToolSource

__all__ = [
    "BUILT_IN_SERVER",
    "RunCalls",
    "ToolTable",
    "built_in_named",
    "built_in_server",
    "current_tool_execution",
    "full_tool_name",
]

MCP_SOURCE_SERVER = "dex_mcp"
"""The in-process server name that carries every `McpToolSource` tool."""

BUILT_IN_SERVER = "dex_session"
"""The in-process server name that carries the session's enabled built-in tools."""

_EXECUTION: contextvars.ContextVar[DeferredToolExecution | None] = contextvars.ContextVar(
    "dex_claude_tool_execution", default=None
)


def current_tool_execution() -> DeferredToolExecution | None:
    """The tool Step's call while an SDK tool's handler runs in one, else None (inline).

    A handler reads `idempotency_key` from it to hand to the service it calls.
    """
    return _EXECUTION.get()


def full_tool_name(server: str, tool: str) -> str:
    """The name the CLI gives an MCP tool, and the name the session records."""
    return f"mcp__{server}__{tool}"


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@dataclass
class RunCalls:
    """One run's hand-off from the PreToolUse hook to the handlers it let through."""

    recorded: dict[tuple[str, str], AgentToolCall] = field(default_factory=dict)
    """Calls the turn already ran in tool Steps, by (tool name, canonical arguments)."""
    inline: dict[tuple[str, str], str] = field(default_factory=dict)
    """Inline reads, to their tool call ID (for the MCP idempotency key)."""


def _text(result: Mapping[str, Any]) -> str:
    parts = result.get("content", [])
    return "".join(
        str(p.get("text", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def _annotation_effect(tool: SdkMcpTool[Any]) -> ToolEffect | None:
    annotations = tool.annotations
    if annotations is None:
        return None
    wire = annotations.model_dump(by_alias=True, exclude_none=True)
    return tool_effect_from_annotations(wire)


@dataclass(frozen=True)
class RunnerTool:
    name: str
    """`mcp__<server>__<tool>`."""
    bare_name: str
    framework_effect: ToolEffect | None
    sdk_tool: SdkMcpTool[Any] | None = None
    mcp_tool: McpTool | None = None
    source: McpToolSource | None = None


class ToolTable:
    """Every tool the runner owns, by the name the CLI calls it."""

    def __init__(
        self,
        tools: Mapping[str, Sequence[SdkMcpTool[Any]]],
        sources: Sequence[McpToolSource],
        taken_servers: Sequence[str],
    ) -> None:
        for server in tools:
            if server in taken_servers:
                raise ValueError(
                    f"tools server {server!r} is also in options.mcp_servers; name it apart"
                )
            if server == BUILT_IN_SERVER or (server == MCP_SOURCE_SERVER and sources):
                raise ValueError(f"tools server name {server!r} is reserved")
        self._servers = {name: list(ts) for name, ts in tools.items()}
        self._sources = list(sources)
        self._tools: dict[str, RunnerTool] = {}
        for server, server_tools in self._servers.items():
            for tool in server_tools:
                name = full_tool_name(server, tool.name)
                if name in self._tools:
                    raise ValueError(f"tool {name!r} is declared twice")
                self._tools[name] = RunnerTool(
                    name=name,
                    bare_name=tool.name,
                    framework_effect=_annotation_effect(tool),
                    sdk_tool=tool,
                )
        self._listed = False

    async def list_sources(self) -> None:
        if self._listed or not self._sources:
            return
        taken: list[str] = []
        for source in self._sources:
            for tool in await source.list_tools(taken=taken):
                taken.append(tool.name)
                name = full_tool_name(MCP_SOURCE_SERVER, tool.name)
                self._tools[name] = RunnerTool(
                    name=name,
                    bare_name=tool.name,
                    framework_effect=tool.effect,
                    mcp_tool=tool,
                    source=source,
                )
        self._listed = True

    def get(self, name: str) -> RunnerTool | None:
        return self._tools.get(name)

    def servers(self, flow_id: str, turn_id: str, calls: RunCalls) -> dict[str, McpSdkServerConfig]:
        """This run's in-process servers, their handlers bound to `calls`."""
        servers: dict[str, McpSdkServerConfig] = {}
        for server, server_tools in self._servers.items():
            wrapped = [
                SdkMcpTool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.input_schema,
                    handler=_handler(full_tool_name(server, t.name), t, calls),
                    annotations=t.annotations,
                )
                for t in server_tools
            ]
            servers[server] = create_sdk_mcp_server(server, tools=wrapped)
        mcp_tools = [t for t in self._tools.values() if t.mcp_tool is not None]
        if mcp_tools:
            servers[MCP_SOURCE_SERVER] = create_sdk_mcp_server(
                MCP_SOURCE_SERVER,
                tools=[_mcp_tool(t, calls, flow_id, turn_id) for t in mcp_tools],
            )
        return servers

    async def execute(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        """Runs one deferred call's real body, in its tool Step; an MCP source's call may
        start a task instead, which the runner's `McpSourceTasks` polls."""
        record = call.tool_call
        tool = self._tools.get(record.tool_name)
        if tool is None:
            await self.list_sources()
            tool = self._tools.get(record.tool_name)
        if tool is None:
            raise ToolExecutionError(f"the tool {record.tool_name!r} is not one of this agent's")
        arguments = parse_tool_arguments(record.arguments)
        if tool.source is not None:
            return await tool.source.execute_deferred_tool_call(call)
        assert tool.sdk_tool is not None
        await call.heartbeat()
        token = _EXECUTION.set(call)
        try:
            with running(DexRunInfo.of_tool_step(call)):
                result = await tool.sdk_tool.handler(arguments)
        finally:
            _EXECUTION.reset(token)
        if result.get("is_error"):
            raise ToolExecutionError(_text(result))
        return ToolExecutionResult(output=_text(result))


def recorded_result(record: AgentToolCall) -> dict[str, Any]:
    """A final record as the tool's MCP result, the design's model-visible text."""
    return {
        "content": [{"type": "text", "text": model_visible_result(record)}],
        "is_error": record.status is not ToolCallStatus.SUCCEEDED,
    }


def built_in_named(name: str, enabled: Sequence[BuiltInToolName]) -> BuiltInToolName | None:
    """The enabled built-in the CLI calls `name`, if any."""
    return next((b for b in enabled if full_tool_name(BUILT_IN_SERVER, b) == name), None)


def built_in_server(
    enabled: Sequence[BuiltInToolName], calls: RunCalls
) -> dict[str, McpSdkServerConfig]:
    """The run's server of the enabled built-ins (none when no built-in is enabled)."""
    if not enabled:
        return {}

    def answer(name: str) -> Any:
        async def handle(arguments: Any) -> dict[str, Any]:
            record = calls.recorded.pop((name, canonical_arguments(arguments)), None)
            if record is not None:
                return recorded_result(record)
            return {  # the hook defers every call first: this is a CLI that did not ask it
                "content": [{"type": "text", "text": "the session runs this tool itself"}],
                "is_error": True,
            }

        return handle

    tools = [
        SdkMcpTool(
            name=d.name,
            description=d.description,
            input_schema=dict(d.parameters),
            handler=answer(full_tool_name(BUILT_IN_SERVER, d.name)),
        )
        for d in (BUILT_IN_TOOL_DEFINITIONS[b] for b in enabled)
    ]
    return {BUILT_IN_SERVER: create_sdk_mcp_server(BUILT_IN_SERVER, tools=tools)}


def _handler(name: str, tool: SdkMcpTool[Any], calls: RunCalls) -> Any:
    async def handle(arguments: Any) -> dict[str, Any]:
        record = calls.recorded.pop((name, canonical_arguments(arguments)), None)
        if record is not None:
            return recorded_result(record)
        return await tool.handler(arguments)

    return handle


def _mcp_tool(tool: RunnerTool, calls: RunCalls, flow_id: str, turn_id: str) -> SdkMcpTool[Any]:
    source, listed, name = tool.source, tool.mcp_tool, tool.name
    if source is None or listed is None:
        raise ValueError(f"{name!r} is not an MCP source's tool")

    async def handle(arguments: Any) -> dict[str, Any]:
        key = (name, canonical_arguments(arguments))
        record = calls.recorded.pop(key, None)
        if record is not None:
            return recorded_result(record)
        tool_call_id = calls.inline.pop(key, "inline")
        try:
            text = await source.call_tool(
                listed.name,
                arguments,
                idempotency_key=f"{flow_id}/{turn_id}/{tool_call_id}",
                tool_source_reference=listed.reference,
            )
        except ToolExecutionError as exc:
            return {"content": [{"type": "text", "text": exc.message}], "is_error": True}
        return {"content": [{"type": "text", "text": text}]}

    return SdkMcpTool(
        name=listed.name,
        description=listed.description,
        input_schema=dict(listed.parameters),
        handler=handle,
    )
