"""MCP tools (`mcp_sources=[McpToolSource]`) in an AdkRunner, against a real stdio server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import ToolEffect
from dex_agents_google_adk import AdkRunner
from dex_agents_google_adk.testing import (
    FakeSession,
    ScriptedLlm,
    call,
    declarations,
    function_results,
    text,
)
from dex_agents_testing.mcp_notes import logged_calls, notes_source
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from support import get_weather


def test_mcp_tools_defer_with_their_effect_and_run_through_the_source(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    source = notes_source(log)
    offered: list[list[str]] = []
    declared: list[types.FunctionDeclaration] = []

    def respond(request: LlmRequest) -> list[types.Part]:
        offered.append(sorted(request.tools_dict))
        declared.extend(declarations(request))
        results = {call_id: result for call_id, _, result in function_results(request)}
        if results:
            return [text(f"Read: {results['n1']}")]
        return [call("notes__read_note", {"title": "shopping"}, "n1")]

    agent = LlmAgent(name="notes", model=ScriptedLlm(respond), tools=[get_weather])
    session = FakeSession(AdkRunner(agent, mcp_sources=[source]))
    session.start_turn("read my shopping note")
    deferred = session.run_model()
    assert isinstance(deferred, ToolCallsRequested)
    (deferred_call,) = deferred.tool_calls
    assert deferred_call.tool_name == "notes__read_note"
    assert deferred_call.effect is ToolEffect.READ  # from readOnlyHint
    assert not deferred_call.requires_approval
    assert deferred_call.tool_source_reference is not None
    assert offered[0] == ["get_weather", "notes__read_note"]
    schema = next(d for d in declared if d.name == "notes__read_note").parameters_json_schema
    assert isinstance(schema, dict)
    assert "title" in schema["properties"]
    assert not log.exists()  # nothing ran inside RunModel

    session.execute_and_record("n1")
    assert [c["key"] for c in logged_calls(log)] == ["session-1/turn-1/n1"]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Read: note shopping: buy milk"
