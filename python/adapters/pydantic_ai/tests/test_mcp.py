"""MCP tools in a Pydantic AI agent (`McpSourceToolset`), against a real stdio MCP server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from dex_agents import ToolEffect, ToolPolicy
from dex_agents.mcp import McpStdioServer, McpToolSource
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_pydantic_ai.mcp import McpSourceToolset
from dex_agents_pydantic_ai.testing import FakeSession
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

SERVER = '''
import json, sys
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
log = sys.argv[1]


def record(tool, ctx, **arguments):
    meta = ctx.request_context.meta or {}
    with open(log, "a") as out:
        out.write(json.dumps({"tool": tool, "key": meta.get("io.superdurable.dex/idempotencyKey"),
                              "arguments": arguments}) + "\\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def read_note(title: str, ctx: Context) -> str:
    """Reads a note."""
    record("read_note", ctx, title=title)
    return f"note {title}: buy milk"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True, destructive_hint=True))
async def save_note(title: str, ctx: Context) -> str:
    """Saves a note."""
    record("save_note", ctx, title=title)
    return "saved"


server.run("stdio")
'''


def child_env() -> dict[str, str]:
    """The server child imports `mcp` from wherever this interpreter does."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def test_mcp_tools_defer_with_their_effect_and_reference_and_run_in_the_tool_step(
    tmp_path: Path,
) -> None:
    script, log = tmp_path / "notes_server.py", tmp_path / "calls.jsonl"
    script.write_text(SERVER, encoding="utf-8")
    source = McpToolSource(
        [
            McpStdioServer(
                name="notes", command=sys.executable, args=(str(script), str(log)), env=child_env()
            )
        ]
    )
    offered: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.append(sorted(tool.name for tool in info.function_tools))
        if len(offered) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart("notes__read_note", {"title": "shop"}, tool_call_id="r1"),
                    ToolCallPart("notes__save_note", {"title": "shop"}, tool_call_id="w1"),
                ]
            )
        return ModelResponse(parts=[TextPart(content="done")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model),
        output_type=[str, DeferredToolRequests],
        toolsets=[McpSourceToolset(source)],
    )
    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("Read and save my shopping note")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert offered[0] == ["notes__read_note", "notes__save_note"]
    read, write = outcome.tool_calls
    assert read.policy.effect is ToolEffect.READ
    assert write.policy.effect is ToolEffect.IDEMPOTENT_WRITE
    assert read.tool_source_reference == '{"server":"notes","tool":"read_note"}'
    assert session.execute("r1").output == "note shop: buy milk"
    session.execute_and_record("r1")
    session.execute_and_record("w1")
    assert isinstance(session.run_model(), TurnCompleted)
    logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    key = f"{session.flow_id}/{session.turn_id}/"
    assert [(e["tool"], e["key"]) for e in logged] == [
        ("read_note", key + "r1"),
        ("read_note", key + "r1"),
        ("save_note", key + "w1"),
    ]


def test_merge_tool_policies_lets_an_explicit_policy_win(tmp_path: Path) -> None:
    script, log = tmp_path / "notes_server.py", tmp_path / "calls.jsonl"
    script.write_text(SERVER, encoding="utf-8")
    source = McpToolSource(
        [
            McpStdioServer(
                name="notes", command=sys.executable, args=(str(script), str(log)), env=child_env()
            )
        ]
    )

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart("notes__save_note", {"title": "x"}, tool_call_id="w1")]
        )

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model),
        output_type=[str, DeferredToolRequests],
        toolsets=[McpSourceToolset(source)],
    )
    asyncio.run(source.list_tools())
    policies = source.merge_tool_policies(
        {"notes__save_note": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)}
    )
    session = FakeSession(PydanticAiRunner(agent, tool_policies=policies))
    session.start_turn("save")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    (write,) = outcome.tool_calls
    assert write.policy.effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert write.policy.requires_approval is True
