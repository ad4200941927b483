"""ClaudeAgentRunner's declared capabilities on dexlite with a real Worker process.

Parallel deferred calls: a response with two approval-gated writes runs them one
after the other, each with its own approval and tool Step, and the CLI resumes
once both results are in the transcript.
"""

from __future__ import annotations

from dex_agents_contracts import AgentSnapshot, MessageRole

from integration.claude_workers import App


def _awaiting(tool_call_id: str) -> object:
    def check(snapshot: AgentSnapshot) -> bool:
        return any(i.tool_call_id == tool_call_id for i in snapshot.pending_interrupts)

    return check


def test_two_deferred_writes_of_one_response_run_one_after_the_other(app: App) -> None:
    session = app.start("two bookings")
    app.wait(session, "k1's approval", _awaiting("k1"))
    assert app.entries("tool", "book_trip") == []
    assert app.client.resolve_interrupt(session, "k1", approved=True)
    waiting = app.wait(session, "m1's approval", _awaiting("m1"))
    # m1 is asked for after k1 ran, and only m1 waits.
    assert [i.tool_call_id for i in waiting.pending_interrupts] == ["m1"]
    assert [e["key"] for e in app.entries("tool", "book_trip")] == [f"{session}/turn-1/k1"]
    assert app.client.resolve_interrupt(session, "m1", approved=True)
    snapshot = app.wait_idle(session, 1)

    assert snapshot.messages[-1].text == "Results: book_trip=booked Rome; book_trip=booked Oslo"
    keys = [e["key"] for e in app.entries("tool", "book_trip")]
    assert keys == [f"{session}/turn-1/k1", f"{session}/turn-1/m1"]
    # The middle RunModel only asked for m1's Step: two model calls in the turn.
    assert len(app.entries("model")) == 2
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 2
    assert [(m.role, m.tool_call_id) for m in snapshot.messages if m.role is MessageRole.TOOL] == [
        (MessageRole.TOOL, "k1"),
        (MessageRole.TOOL, "m1"),
    ]
    gated = ["AwaitToolApproval", "CallSingleAttemptTool", "ResumeTurn", "RunModel"]
    assert app.shapes(session) == [["RunModel", *gated, *gated]]
