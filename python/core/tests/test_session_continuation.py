"""Turn continuation on a real Worker: Stepwise's decide_turn_continuation through RunModel."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from dex_agents.session._steps.model import INCREMENTAL_MESSAGES_NEED_BUILDER
from dex_agents.stepwise import MAX_CONSECUTIVE_CONTINUATIONS
from dex_agents_contracts import MessageRole
from dex_agents_testing import assert_step_shape
from helpers import Harness

FACTORY = "stepwise_flows:flow"
TOO_MANY = (
    f"the turn was continued more than {MAX_CONSECUTIVE_CONTINUATIONS} times in a row "
    "by decide_turn_continuation"
)


def test_continuation_runs_model_again_in_the_same_turn(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {})
    session = h.start("continue:2")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None
    assert [m.text for m in snapshot.messages] == [
        "continue:2",
        "continuing 2",
        "go on",
        "continuing 2",
        "go on",
        "continuing 2",
    ]
    assert {m.turn_id for m in snapshot.messages} == {"turn-1"}
    assert [m.role for m in snapshot.messages][2] is MessageRole.USER
    assert_step_shape(h.history(session), ["RunModel", "RunModel", "RunModel"])
    # Each continued call saw the answer and the continuation message.
    calls = h.log.entries("model_call")
    assert calls[2]["texts"] == [m.text for m in snapshot.messages[:5]]
    assert snapshot.usage is not None
    assert snapshot.usage.model_calls == 3
    types = [e.type for e in h.events(session, "turn_completed")]
    assert "turn_failed" not in types


def test_continuation_limit_fails_the_turn_without_retry(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {})
    session = h.start("continue:100")
    snapshot = h.wait_idle(session, 1, timeout=60)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == TOO_MANY
    calls = MAX_CONSECUTIVE_CONTINUATIONS + 1
    assert h.log.count("model_call") == calls
    assert_step_shape(h.history(session), ["RunModel"] * calls)
    events = h.events(session, "turn_failed")
    assert [e for e in events if e.type == "turn_completed"] == []
    # The last answer is stored, and a later turn clears the error.
    assert snapshot.messages[-1].text == "continuing 100"
    assert h.client.send_user_message(session, "say hi")
    snapshot = h.wait_idle(session, 2)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error is None


def test_continued_messages_without_unfinished_builder_fail_the_turn(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {"runner": "without_unfinished_builder"})
    session = h.start("continue:1")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == INCREMENTAL_MESSAGES_NEED_BUILDER
    assert h.log.count("model_call") == 1  # no retry
    assert_step_shape(h.history(session), ["RunModel"])
    assert [m.text for m in snapshot.messages] == ["continue:1"]


def test_incremental_tool_call_messages_without_builder_fail_the_turn(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {"runner": "incremental_without_builder"})
    session = h.start("tool:a")
    snapshot = h.wait_idle(session, 1)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == INCREMENTAL_MESSAGES_NEED_BUILDER
    assert h.log.count("model_call") == 1
    assert_step_shape(h.history(session), ["RunModel"])
    assert [m.text for m in snapshot.messages] == ["tool:a"]  # no tool ran, nothing stored
    assert snapshot.tool_calls == []


@pytest.mark.parametrize("runner", ["faulty_builder_raise", "faulty_builder_bad"])
def test_faulty_unfinished_builder_still_leaves_the_failure_note(
    factory_harness: Callable[..., Harness], runner: str
) -> None:
    h = factory_harness(FACTORY, {"runner": runner})
    session = h.start("fail-after-tool:x")
    snapshot = h.wait_idle(session, 1, timeout=90)
    assert snapshot.state is not None
    assert "the model failed after the tool result" in (snapshot.state.last_turn_error or "")
    texts = [m.text or "" for m in snapshot.messages]
    assert texts[0] == "fail-after-tool:x"
    assert len(texts) == 2  # nothing from the faulty builder, then the note
    assert texts[1].startswith("[Dex] The previous turn failed after these tool calls ran:\n")
    assert "- lookup " in texts[1]
    log = Path(h.worker.log_path).read_text(encoding="utf-8")
    assert "build_unfinished_turn_messages" in log  # the warning
    assert_step_shape(
        h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RecordTurnFailure"]
    )


def test_failed_turn_keeps_the_unfinished_messages_of_a_working_builder(
    factory_harness: Callable[..., Harness],
) -> None:
    h = factory_harness(FACTORY, {})
    session = h.start("fail-after-tool:x")
    snapshot = h.wait_idle(session, 1, timeout=90)
    roles = [m.role for m in snapshot.messages]
    assert roles == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.USER]
    assert snapshot.messages[1].tool_call_id == "call-x"
    assert snapshot.messages[2].tool_output == "found"
    assert (snapshot.messages[3].text or "").startswith(
        "[Dex] The previous turn failed after these tool calls ran:\n"
    )


@pytest.mark.parametrize(
    ("command", "turn_error"),
    [
        ("refuse-after-tool", "the framework refused to go on after the tool result"),
        (
            "unreadable-after-tool",
            "cannot resume the turn: the stored run state is not this runner's",
        ),
    ],
)
def test_a_turn_ending_error_fails_the_turn_in_its_first_attempt(
    factory_harness: Callable[..., Harness], command: str, turn_error: str
) -> None:
    """TurnFailed and RunStateError would fail every retry, so RunModel ends the turn at
    once, storing what RecordTurnFailure would (the transcript, then the note)."""
    h = factory_harness(FACTORY, {})
    session = h.start(f"{command}:x")
    snapshot = h.wait_idle(session, 1, timeout=90)
    assert snapshot.state is not None
    assert snapshot.state.last_turn_error == turn_error
    assert h.log.count("model_call") == 2  # the tool call's, then the failing one: no retry
    assert_step_shape(h.history(session), ["RunModel", "CallTool", "ResumeTurn", "RunModel"])
    roles = [m.role for m in snapshot.messages]
    assert roles == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL, MessageRole.USER]
    assert (snapshot.messages[3].text or "").startswith(
        "[Dex] The previous turn failed after these tool calls ran:\n- lookup "
    )
    assert [e.type for e in h.events(session, "turn_failed")].count("turn_failed") == 1
