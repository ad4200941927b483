"""MCP tools (`mcp_sources=[McpToolSource]`) in an AdkRunner, against a real stdio server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from dex_agents.mcp import McpStdioServer, McpToolSource
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
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from support import get_weather

SERVER = '''
import json, sys
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def read_note(title: str, ctx: Context) -> str:
    """Reads a note."""
    meta = ctx.request_context.meta or {}
    with open(sys.argv[1], "a") as out:
        out.write(json.dumps({"key": meta.get("io.superdurable.dex/idempotencyKey")}) + "\\n")
    return f"note {title}: buy milk"


server.run("stdio")
'''


def test_mcp_tools_defer_with_their_effect_and_run_through_the_source(tmp_path: Path) -> None:
    script, log = tmp_path / "notes_server.py", tmp_path / "calls.jsonl"
    script.write_text(SERVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    source = McpToolSource(
        [
            McpStdioServer(
                name="notes", command=sys.executable, args=(str(script), str(log)), env=env
            )
        ]
    )
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
    assert deferred_call.policy.effect is ToolEffect.READ  # from readOnlyHint
    assert not deferred_call.policy.requires_approval
    assert deferred_call.tool_source_reference is not None
    assert offered[0] == ["get_weather", "notes__read_note"]
    schema = next(d for d in declared if d.name == "notes__read_note").parameters_json_schema
    assert isinstance(schema, dict)
    assert "title" in schema["properties"]
    assert not log.exists()  # nothing ran inside RunModel

    session.execute_and_record("n1")
    assert [json.loads(line)["key"] for line in log.read_text().splitlines()] == [
        "session-1/turn-1/n1"
    ]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Read: note shopping: buy milk"
