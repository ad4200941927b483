"""MCP tools (`langchain_mcp_tools` + `mcp_sources=`) under LangGraphRunner, against a
real stdio server written to the test's directory; FakeSession runs each tool call
as its tool Step would."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dex_agents.offline import FakeSession
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import MessageRole, ToolEffect
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    LangGraphRunner,
    langchain_mcp_tools,
)
from dex_agents_langgraph.testing import ScriptedChatModel
from dex_agents_testing.mcp_notes import logged_calls, notes_source
from langchain.agents import create_agent
from langchain_core.messages import AIMessage


def test_mcp_tools_defer_with_their_effect_and_run_through_the_source(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    source = notes_source(log)
    tools = asyncio.run(langchain_mcp_tools(source))
    assert [t.name for t in tools] == ["notes__read_note"]
    call: dict[str, Any] = {"id": "n1", "name": "notes__read_note", "args": {"title": "shopping"}}
    model = ScriptedChatModel.of(
        AIMessage(content="", tool_calls=[call]), AIMessage(content="Read it.")
    )
    agent = create_agent(
        model, tools, middleware=[DexStepMiddleware()], checkpointer=DexCheckpointSaver()
    )
    session = FakeSession(LangGraphRunner(agent, mcp_sources=[source]))
    session.start_turn("read my shopping note")

    deferred = session.run_model()
    assert isinstance(deferred, ToolCallsRequested)
    (requested,) = deferred.tool_calls
    assert requested.effect is ToolEffect.READ  # from readOnlyHint
    assert not requested.requires_approval
    assert requested.tool_source_reference is not None
    assert not log.exists()  # nothing ran inside RunModel

    session.execute_and_record("n1")
    keys = [c["key"] for c in logged_calls(log)]
    assert keys == ["session-1/turn-1/n1"]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    results = [m.tool_output for m in done.new_messages if m.role == MessageRole.TOOL]
    assert results == ["note shopping: buy milk"]
