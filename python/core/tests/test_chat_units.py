"""The chat's session logic without Dex: the event fold, the prompts, the typed lines,
and the timeline built from hand-made history events."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from dex.dexpb import dex_pb2 as pb
from dex_agents.chat._controller import ChatController
from dex_agents.chat._state import ChatState, interrupt_prompt
from dex_agents.chat._terminal import LineEditor
from dex_agents.chat._timeline import build_timeline
from dex_agents_contracts import (
    AgentEvent,
    AgentInterrupt,
    AgentMessage,
    AgentSnapshot,
    AgentState,
    AgentStatus,
    InterruptKind,
    MessageRole,
)


def _event(kind: str, step: str = "RunModel-1", attempt: int = 1, **payload: Any) -> AgentEvent:
    return AgentEvent(
        type=kind,
        turn_id="turn-1",
        attempt=attempt,
        payload=json.dumps(payload),
        step_execution_id=step,
    )


def test_live_text_keeps_the_highest_attempt_and_gives_way_to_stored_messages() -> None:
    state = ChatState()
    state.apply(_event("turn_started", sequence=1))
    state.apply(_event("text_delta", text="partial "))
    lines = state.apply(_event("text_delta", attempt=2, text="final"))
    assert "attempt 2" in lines[0].text
    assert state.apply(_event("text_delta", attempt=1, text=" late")) == []
    assert state.live["RunModel-1"].text == "final"
    snapshot = AgentSnapshot(
        state=AgentState(status=AgentStatus.WAITING_FOR_USER_MESSAGE),
        messages=[
            AgentMessage(sequence=2, turn_id="turn-1", role=MessageRole.ASSISTANT, text="final")
        ],
    )
    assert [o.text for o in state.finish_turn("turn-1", snapshot)] == ["agent > final"]
    assert not state.live
    assert not state.busy()


def test_prompts_count_down_and_typed_lines_become_rpcs() -> None:
    deadline = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    approval = AgentInterrupt(
        interrupt_id="c1",
        kind=InterruptKind.TOOL_APPROVAL,
        tool_call_id="c1",
        tool_name="deploy",
        arguments="{}",
        deadline=deadline,
    )
    now = (deadline - timedelta(seconds=75)).timestamp()
    assert interrupt_prompt(approval, now).endswith("1:15 left")
    question = AgentInterrupt(
        interrupt_id="q1", kind=InterruptKind.QUESTION, question="Which?", choices=["a", "b"]
    )
    assert "1) a  2) b" in interrupt_prompt(question)

    calls: list[str] = []

    class FakeClient:
        def __getattr__(self, name: str) -> Callable[..., bool]:
            def call(*args: Any, **kwargs: Any) -> bool:
                calls.append(f"{name} {args[1:]} {sorted(kwargs.items())}")
                return True

            return call

    class FakeSession:
        session_id = "s1"
        client = FakeClient()

        def rpc(self, what: str, call: Callable[[], object], refused: str) -> None:
            call()

    state = ChatState(pending=[approval])
    controller = ChatController(state, FakeSession())  # type: ignore[arg-type]
    controller.handle_line("n too risky")
    assert (
        calls[-1]
        == "resolve_interrupt ('c1',) [('approved', False), ('rejection_message', 'too risky')]"
    )
    assert not state.pending
    state.pending = [question]
    controller.handle_line("2")
    assert calls[-1] == "answer_question ('q1', 'b') []"
    controller.handle_line("/steer go left")
    assert calls[-1] == "steer_user_message () [('text', 'go left')]"
    controller.handle_line("/settings [1]")
    assert calls[-1].startswith("steer")  # refused before sending
    controller.handle_line("hello")
    assert calls[-1] == "send_user_message ('hello',) [('plan_mode', False)]"
    assert controller.handle_line("/nope")[0].text.startswith("unknown command /nope")
    controller.handle_line("/quit")
    assert controller.quit


def test_line_editor_handles_backspace_escapes_and_utf8() -> None:
    editor = LineEditor()
    assert editor.feed(b"hej\x7f\x7fi \x1b[Ao") == []
    assert editor.feed("k ✓\r".encode()) == ["hi ok ✓"]


def _step(  # noqa: PLR0917 - one history event, field by field
    kind: str, step: str, start: float, took: float, attempt: int = 1, failure: str = ""
) -> pb.FlowHistoryEvent:
    event = pb.FlowHistoryEvent()
    event.event_time.FromNanoseconds(int((start + took) * 1e9))
    body = getattr(event, kind)
    context = body.context
    context.step_execution_id = step
    context.step_type = step.rsplit("-", 1)[0]
    context.final_attempt = attempt
    context.started_time.FromNanoseconds(int(start * 1e9))
    context.duration.FromNanoseconds(int(took * 1e9))
    if failure:
        context.last_failure_info.backend_error = failure
        context.last_failure_info.attempt = attempt - 1
    return event


def test_timeline_numbers_turns_and_names_retries_after_kills() -> None:
    history = [
        _step("step_execute_completed", "StartAgentSession-1", 100.0, 0.01),
        _step("step_wait_for_completed", "AwaitUserMessage-1", 100.01, 0.01),
        _step("step_execute_completed", "AwaitUserMessage-1", 103.0, 0.01),
        _step(
            "step_execute_completed",
            "RunModel-1",
            103.01,
            1.5,
            attempt=2,
            failure="pull worker stream closed during the task",
        ),
    ]
    entries = build_timeline(history)
    assert [(e.name, e.kind, e.turn) for e in entries] == [
        ("StartAgentSession-1", "execute", 0),
        ("AwaitUserMessage-1", "wait", 0),
        ("AwaitUserMessage-1", "execute", 1),
        ("RunModel-1", "execute", 1),
    ]
    assert entries[2].notes == ["waited 3.0 s"]
    assert entries[3].notes == [
        "retried: attempt 1 Worker killed or lost (pull worker stream closed during the task);"
        " attempt 2 committed"
    ]
    assert abs((entries[3].duration_seconds or 0) - 1.5) < 1e-6
