"""MCP tools (`mcp_sources=[McpToolSource]`) in a ClaudeAgentRunner, against a real stdio server.

The read tool runs inline through the source (with its idempotency key in
`_meta`); the unannotated write is deferred and runs through the source in its
tool Step, once.
"""

from __future__ import annotations

from pathlib import Path

from dex_agents.offline import FakeSession
from dex_agents.runner import ToolCallsRequested, TurnCompleted
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
from dex_agents_testing.mcp_notes import logged_calls, notes_source

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
    log = tmp_path / "calls.jsonl"
    source = notes_source(log, ("read_note", "add_note"))
    with FakeMessagesServer(script) as api:
        runner = ClaudeAgentRunner(offline_options(api.base_url), mcp_sources=[source])
        session = FakeSession(runner)
        session.start_turn("notes please")
        outcome = session.run_model()
        assert isinstance(outcome, ToolCallsRequested)
        (call,) = outcome.tool_calls
        assert call.tool_name == WRITE
        assert call.effect is ToolEffect.UNCLASSIFIED
        assert call.tool_source_reference is not None
        assert set(api.requests[0].tool_names) >= {READ, WRITE}
        session.finish("n2", ToolCallStatus.APPROVED)
        session.execute_and_record("n2")
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Results: note shopping: buy milk; added milk"
    assert [(c["tool"], c["key"]) for c in logged_calls(log)] == [
        ("read_note", "session-1/turn-1/n1"),
        ("add_note", "session-1/turn-1/n2"),
    ]
