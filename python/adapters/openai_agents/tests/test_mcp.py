"""MCP tools (`mcp_sources=[McpToolSource]`) in an OpenAiAgentsRunner, against a real stdio server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents import Agent
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents.testing import FakeSession, RespondingModel
from dex_agents_testing.mcp_notes import logged_calls, notes_source
from support import get_weather, outputs


def test_mcp_tools_defer_with_their_effect_and_run_through_the_source(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    source = notes_source(log)
    offered: list[list[str]] = []

    def respond(call: ModelCall) -> Any:
        offered.append(sorted(str(getattr(t, "name", "")) for t in call.tools))
        results = outputs(call)
        if results:
            return [assistant_message(f"Read: {results['n1']}")]
        return [function_call("notes__read_note", {"title": "shopping"}, call_id="n1")]

    agent: Agent[Any] = Agent(name="notes", model=RespondingModel(respond), tools=[get_weather])
    session = FakeSession(OpenAiAgentsRunner(agent, mcp_sources=[source]))
    session.start_turn("read my shopping note")
    deferred = session.run_model()
    assert isinstance(deferred, ToolCallsRequested)
    (call,) = deferred.tool_calls
    assert call.tool_name == "notes__read_note"
    assert call.effect is ToolEffect.READ  # from readOnlyHint
    assert not call.requires_approval
    assert call.tool_source_reference is not None
    assert offered[0] == ["get_weather", "notes__read_note"]
    assert not log.exists()  # nothing ran inside RunModel

    session.execute_and_record("n1")
    assert [c["key"] for c in logged_calls(log)] == ["session-1/turn-1/n1"]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Read: note shopping: buy milk"
