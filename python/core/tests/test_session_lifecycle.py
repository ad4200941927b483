"""Matrix items 10 and 11, events, invalid runner output and oversized run state."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path

from dex import FlowStatus, StartFlowOptions
from dex_agents_contracts import (
    AgentSessionStartInput,
    AgentStatus,
    MessageRole,
    ToolEffect,
    decode_turn_started_payload,
    struct_from_json,
    struct_to_json,
)
from dex_agents_testing import (
    ModelReply,
    ScriptedTool,
    ScriptedToolCall,
    assert_step_shape,
    wait_until,
)
from helpers import HarnessFactory


def test_message_sent_during_a_turn_is_queued_and_handled_after_it(
    harness: HarnessFactory, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    h = harness(
        script=[[ModelReply(text="first answer", gate=str(gate))], [ModelReply(text="second")]]
    )
    session = h.start("first")
    wait_until(lambda: h.log.count("model") == 1, what="the first model call")
    assert h.client.send_user_message(session, "second question")
    during = h.snapshot(session)
    assert during.queued_message_count == 1
    assert [m.message.text for m in during.queued_messages if m.message] == ["second question"]
    assert during.state is not None
    assert during.state.status is AgentStatus.RUNNING_MODEL
    assert [m.text for m in during.messages] == ["first"]
    gate.touch()
    done = h.wait_idle(session, 2)
    assert [m.text for m in done.messages] == ["first", "first answer", "second question", "second"]
    assert done.queued_message_count == 0
    assert h.shapes(session) == [["RunModel"], ["RunModel"]]


def test_snapshot_after_a_completed_turn(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [
                ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="c1", tool_name="lookup")]),
                ModelReply(text="It is 42."),
            ]
        ],
        tools=[ScriptedTool(name="lookup", output="42")],
    )
    session = h.start()
    idle = h.wait_snapshot(
        session, lambda s: s.state is not None, what="StartAgentSession to commit"
    )
    assert idle.state is not None
    assert idle.state.status is AgentStatus.WAITING_FOR_USER_MESSAGE
    assert idle.state.next_message_sequence == 1
    assert idle.messages == []
    assert h.client.send_user_message(session, "What is it?")
    done = h.wait_idle(session, 1)
    assert done.state is not None
    assert done.state.turn_count == 1
    assert done.state.active_turn_id is None
    assert done.state.last_turn_error is None
    assert [(m.sequence, m.role, m.turn_id) for m in done.messages] == [
        (1, MessageRole.USER, "turn-1"),
        (2, MessageRole.ASSISTANT, "turn-1"),
        (3, MessageRole.TOOL, "turn-1"),
        (4, MessageRole.ASSISTANT, "turn-1"),
    ]
    assert done.messages[1].tool_name == "lookup"
    assert done.messages[1].tool_call_id == "c1"
    assert done.messages[3].text == "It is 42."
    assert all(m.created_at is not None for m in done.messages)
    assert done.tool_calls == []
    assert done.pending_interrupts == []
    assert done.usage is not None
    assert (done.usage.model_calls, done.usage.input_tokens, done.usage.output_tokens) == (
        2,
        20,
        10,
    )
    assert done.queued_message_count == 0


def test_events_of_a_turn_carry_turn_execution_and_attempt(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [
                ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="c1", tool_name="lookup")]),
                ModelReply(text="done"),
            ]
        ],
        tools=[ScriptedTool(name="lookup", output="42")],
    )
    session = h.start("go")
    events = h.events(session, "turn_completed")
    assert [e.type for e in events] == [
        "turn_started",
        "usage_recorded",
        "tool_call_deferred",
        "tool_call_started",
        "tool_call_finished",
        "usage_recorded",
        "turn_completed",
    ]
    assert {e.turn_id for e in events} == {"turn-1"}
    assert all(e.attempt == 1 and e.step_execution_id for e in events)
    assert decode_turn_started_payload(events[0].payload).sequence == 1
    assert json.loads(events[2].payload) == {
        "tool_call_id": "c1",
        "tool_name": "lookup",
        "effect": "read",
        "requires_approval": False,
    }
    assert json.loads(events[4].payload)["status"] == "succeeded"
    assert json.loads(events[-1].payload) == {"message_count": 3}
    # The two model calls are different Step executions; the tool Step is a third.
    assert (
        len({events[1].step_execution_id, events[3].step_execution_id, events[5].step_execution_id})
        == 3
    )
    # Following from a resume token yields only later events.
    followed = list(h.client.follow_events(session, until=lambda e: e.type == "tool_call_started"))
    token = followed[-1][1]
    later = [
        e.type
        for e, _ in h.client.follow_events(
            session, token, until=lambda e: e.type == "turn_completed"
        )
    ]
    assert later == ["tool_call_finished", "usage_recorded", "turn_completed"]


def test_invalid_tool_call_ids_fail_the_turn_without_retry(harness: HarnessFactory) -> None:
    h = harness(
        script=[
            [ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="a/b", tool_name="lookup")])],
            [
                ModelReply(
                    tool_calls=[
                        ScriptedToolCall(tool_call_id="x", tool_name="lookup"),
                        ScriptedToolCall(tool_call_id="x", tool_name="lookup"),
                    ]
                )
            ],
            [ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="", tool_name="lookup")])],
        ],
        tools=[ScriptedTool(name="lookup")],
    )
    session = h.start("one")
    first = h.wait_idle(session, 1)
    assert first.state is not None
    assert first.state.last_turn_error == "dex-agents: tool call ID 'a/b' must not contain '/'"
    assert h.client.send_user_message(session, "two")
    second = h.wait_idle(session, 2)
    assert second.state is not None
    assert second.state.last_turn_error == "dex-agents: tool call ID 'x' is used twice in one turn"
    assert h.client.send_user_message(session, "three")
    third = h.wait_idle(session, 3)
    assert third.state is not None
    assert third.state.last_turn_error == "dex-agents: a tool call ID must not be empty"
    assert h.log.count("tool") == 0
    assert h.log.count("model") == 3  # no retries
    failed = [e for e in h.events(session, "turn_failed", count=3) if e.type == "turn_failed"]
    assert [json.loads(e.payload)["error"] for e in failed] == [
        "dex-agents: tool call ID 'a/b' must not contain '/'",
        "dex-agents: tool call ID 'x' is used twice in one turn",
        "dex-agents: a tool call ID must not be empty",
    ]
    assert [e.turn_id for e in failed] == ["turn-1", "turn-2", "turn-3"]
    assert h.shapes(session) == [["RunModel"], ["RunModel"], ["RunModel"]]


def test_run_state_too_large_ends_the_session(harness: HarnessFactory) -> None:
    h = harness(
        script=[[ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="c1", tool_name="lookup")])]],
        tools=[ScriptedTool(name="lookup", effect=ToolEffect.READ)],
        max_framework_run_state_bytes=20,
    )
    session = h.start("go")
    result = h.client.wait_for_session(session, timeout=timedelta(seconds=60))
    assert result.status is FlowStatus.FAILED
    assert "run state of" in (result.error_message or "")
    assert h.log.count("tool") == 0
    assert_step_shape(h.history(session), ["RecordTurnFailure"])
    assert h.log.count("model") == 3
    # A closed session still answers reads from its retained state.
    final = h.snapshot(session)
    assert final.state is not None
    assert final.state.status is AgentStatus.FAILED
    assert final.state.last_turn_error is not None
    assert "run state of" in final.state.last_turn_error
    assert final.state.active_turn_id is None


def test_session_settings_reach_the_turn_and_the_snapshot(harness: HarnessFactory) -> None:
    h = harness(script=[[ModelReply(text="hi")]])
    settings: dict[str, object] = {"model": "small", "temperature": 0}
    session = h.start("hello", session_settings=settings)
    done = h.wait_idle(session, 1)
    assert done.session_settings is not None
    assert struct_to_json(done.session_settings) == settings
    (call,) = h.log.entries("model")
    assert call["settings"] == settings


def test_start_settings_too_large_fail_the_session(harness: HarnessFactory) -> None:
    h = harness(script=[])
    # Past the Client's own check (start_session refuses these before sending).
    session = f"s-{uuid.uuid4().hex[:12]}"
    start = AgentSessionStartInput(
        initial_message="hello", session_settings=struct_from_json({"blob": "x" * 20_000})
    )
    h.client.client.start_flow(h.flow, session, start, StartFlowOptions())
    result = h.client.wait_for_session(session, timeout=timedelta(seconds=30))
    assert result.status is FlowStatus.FAILED
    assert (result.error_message or "").startswith(
        "dex-agents: the start input's session_settings are not valid session settings"
    )
