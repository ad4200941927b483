"""MCP tools in a Pydantic AI agent (`McpSourceToolset`), against a real stdio MCP server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from dex_agents import ToolEffect, ToolPolicy
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_pydantic_ai import PydanticAiRunner
from dex_agents_pydantic_ai.mcp import McpSourceToolset
from dex_agents_pydantic_ai.testing import FakeSession
from dex_agents_testing.mcp_notes import logged_calls, notes_source
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel


def test_mcp_tools_defer_with_their_effect_and_reference_and_run_in_the_tool_step(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.jsonl"
    source = notes_source(log, ("read_note", "save_note"))
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
    assert read.effect is ToolEffect.READ
    assert write.effect is ToolEffect.IDEMPOTENT_WRITE
    assert read.tool_source_reference == '{"server":"notes","tool":"read_note"}'
    assert session.execute("r1").output == "note shop: buy milk"
    session.execute_and_record("r1")
    session.execute_and_record("w1")
    assert isinstance(session.run_model(), TurnCompleted)
    logged = logged_calls(log)
    key = f"{session.flow_id}/{session.turn_id}/"
    assert [(e["tool"], e["key"]) for e in logged] == [
        ("read_note", key + "r1"),
        ("read_note", key + "r1"),
        ("save_note", key + "w1"),
    ]


def test_merge_tool_policies_lets_an_explicit_policy_win(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    source = notes_source(log, ("read_note", "save_note"))

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
    assert write.effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert write.requires_approval is True
