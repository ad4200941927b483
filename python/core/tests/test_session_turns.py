"""Matrix items 1, 2, 10 and 11: turns, parallel tools, queued messages, snapshots."""

from __future__ import annotations

import uuid

from dex_agents_contracts import MessageRole, ToolCallStatus, ToolEffect
from dex_agents_testing import ModelReply, ScriptedTool, ScriptedToolCall, assert_step_shape
from helpers import HarnessFactory

LOOKUP = ScriptedTool(name="lookup", effect=ToolEffect.READ, output="42")
LOOKUP_THEN_ANSWER_TWICE = [
    [
        ModelReply(
            tool_calls=[
                ScriptedToolCall(tool_call_id="c1", tool_name="lookup", arguments={"q": "x"})
            ]
        ),
        ModelReply(text="The answer is 42."),
    ],
    [ModelReply(text="Still 42.")],
]
"""Turn 1 looks up and answers; turn 2 answers at once."""


def test_turn_with_read_tool_has_step_shape_and_replays_history(harness: HarnessFactory) -> None:
    h = harness(
        script=LOOKUP_THEN_ANSWER_TWICE,
        tools=[LOOKUP],
    )
    session = h.start("What is the answer?")
    first = h.wait_idle(session, 1)
    assert [m.role for m in first.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert first.messages[2].tool_output == "42"
    assert first.messages[3].text == "The answer is 42."
    assert h.client.send_user_message(session, "And again?")
    second = h.wait_idle(session, 2)
    assert second.messages[-1].text == "Still 42."
    history = h.history(session)
    assert_step_shape(history, ["RunModel", "CallTool", "ResumeTurn", "RunModel"], turn=0)
    assert_step_shape(history, ["RunModel"], turn=1)
    # The second turn's model call saw the whole first turn.
    (second_call,) = h.log.entries("model", turn="turn-2")
    assert second_call["seen"] == [
        "What is the answer?",
        None,
        None,
        "The answer is 42.",
        "And again?",
    ]
    assert h.log.count("tool", name="lookup") == 1
    (run,) = h.log.entries("tool", name="lookup")
    assert run["key"] == f"{session}/turn-1/c1"
    assert second.usage is not None
    assert second.usage.model_calls == 3
    assert second.state is not None
    assert second.state.next_message_sequence == 7
    assert (
        all(r.status is ToolCallStatus.SUCCEEDED for r in first.tool_calls) or not first.tool_calls
    )


def test_listening_worker_runs_a_turn_and_survives_sigkill(harness: HarnessFactory) -> None:
    h = harness(
        listen=True,
        script=[
            [
                ModelReply(tool_calls=[ScriptedToolCall(tool_call_id="c1", tool_name="lookup")]),
                ModelReply(text="42"),
            ],
            [ModelReply(text="again")],
        ],
        tools=[LOOKUP],
    )
    session = h.start("answer?")
    h.wait_idle(session, 1)
    h.restart_worker()  # same port, new process
    assert h.client.send_user_message(session, "again?")
    done = h.wait_idle(session, 2)
    assert done.messages[-1].text == "again"
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])


def test_run_turn_returns_the_committed_snapshot_of_the_turn_it_started(
    harness: HarnessFactory,
) -> None:
    """`run_turn` waits for the commit of the Step that wrote the turn's end event."""
    h = harness(
        script=LOOKUP_THEN_ANSWER_TWICE,
        tools=[LOOKUP],
    )
    session = f"s-run-turn-{uuid.uuid4().hex[:8]}"
    first = h.client.run_turn(session, "What is the answer?", new_session=True)
    assert first.state is not None
    assert first.state.active_turn_id is None
    assert [m.text for m in first.messages][-1] == "The answer is 42."
    assert first.state.next_message_sequence == 5
    second = h.client.run_turn(session, "And again?")
    assert second.state is not None
    assert second.state.active_turn_id is None
    assert [m.text for m in second.messages[-2:]] == ["And again?", "Still 42."]
    assert second.state.next_message_sequence == 7
