"""MCP tools (`mcp_sources=[McpToolSource]`) in a ClaudeAgentRunner, against a real stdio server.

The read tool runs inline through the source (with its idempotency key in
`_meta`); the unannotated write is deferred and runs through the source in its
tool Step, once.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from dex_agents.mcp import McpStdioServer, McpToolSource
from dex_agents.runner import FakeSession, ToolCallsRequested, TurnCompleted
from dex_agents_claude_agent_sdk import ClaudeAgentRunner
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_contracts import ToolCallStatus, ToolEffect
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)

SERVER = '''
import json, sys
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")


def log(name, ctx):
    meta = ctx.request_context.meta or {}
    key = meta.get("io.superdurable.dex/idempotencyKey")
    with open(sys.argv[1], "a") as out:
        out.write(json.dumps({"name": name, "key": key}) + "\\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def read_note(title: str, ctx: Context) -> str:
    """Reads a note."""
    log("read_note", ctx)
    return f"note {title}: buy milk"


@server.tool()
async def add_note(title: str, ctx: Context) -> str:
    """Adds a note."""
    log("add_note", ctx)
    return f"added {title}"


server.run("stdio")
'''

READ = "mcp__dex_mcp__notes__read_note"
WRITE = "mcp__dex_mcp__notes__add_note"


def script(request: MessagesRequest) -> ScriptedReply:
    done = {i: text for i, text, _ in request.tool_results()}
    if "n2" in done:
        return text_reply(f"Results: {done['n1']}; {done['n2']}")
    if "n1" in done:
        return tool_use_reply(("n2", WRITE, {"title": "milk"}))
    return tool_use_reply(("n1", READ, {"title": "shopping"}))


def test_mcp_read_runs_inline_and_the_write_in_its_tool_step(tmp_path: Path) -> None:
    server_script, log = tmp_path / "notes_server.py", tmp_path / "calls.jsonl"
    server_script.write_text(SERVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    source = McpToolSource(
        [
            McpStdioServer(
                name="notes", command=sys.executable, args=(str(server_script), str(log)), env=env
            )
        ]
    )
    with FakeMessagesServer(script) as api:
        runner = ClaudeAgentRunner(offline_options(api.base_url), mcp_sources=[source])
        session = FakeSession(runner)
        session.start_turn("notes please")
        outcome = session.run_model()
        assert isinstance(outcome, ToolCallsRequested)
        (call,) = outcome.tool_calls
        assert call.tool_name == WRITE
        assert call.policy.effect is ToolEffect.UNCLASSIFIED
        assert call.tool_source_reference is not None
        assert set(api.requests[0].tool_names) >= {READ, WRITE}
        session.finish("n2", ToolCallStatus.APPROVED)
        session.execute_and_record("n2")
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Results: note shopping: buy milk; added milk"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert calls == [
        {"name": "read_note", "key": "session-1/turn-1/n1"},
        {"name": "add_note", "key": "session-1/turn-1/n2"},
    ]
