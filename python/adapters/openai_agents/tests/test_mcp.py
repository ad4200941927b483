"""MCP tools (`mcp_sources=[McpToolSource]`) in an OpenAiAgentsRunner, against a real stdio server.

The server is a small `MCPServer` script written to the test's directory; the
runner is driven offline by FakeSession, so each tool call runs as its tool
Step would run it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from agents import Agent
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents.mcp import McpStdioServer, McpToolSource
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import ToolEffect
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents.testing import FakeSession, RespondingModel
from support import get_weather, outputs

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
    assert call.policy.effect is ToolEffect.READ  # from readOnlyHint
    assert not call.policy.requires_approval
    assert call.tool_source_reference is not None
    assert offered[0] == ["get_weather", "notes__read_note"]
    assert not log.exists()  # nothing ran inside RunModel

    session.execute_and_record("n1")
    assert [json.loads(line)["key"] for line in log.read_text().splitlines()] == [
        "session-1/turn-1/n1"
    ]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Read: note shopping: buy milk"
