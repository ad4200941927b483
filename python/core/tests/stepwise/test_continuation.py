"""decide_turn_continuation: more model calls in one turn, or ending after tool calls."""

from __future__ import annotations

import json

from dex_agents import ToolPolicy
from dex_agents._runner.values import usage_of
from dex_agents.models import (
    ModelUsage,
    ScriptedModelClient,
    ScriptedResponse,
    ToolResultMessage,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.runner import ToolCallsRequested, TurnCompleted, TurnContinued
from dex_agents.stepwise import (
    MAX_CONSECUTIVE_CONTINUATIONS,
    AgentDefinition,
    StepwiseRunner,
    TurnContinuation,
    TurnContinuationContext,
    TurnContinuationDecision,
    TurnContinuationHook,
    tool,
)
from dex_agents_contracts import AgentUsage, MessageRole, ToolEffect
from stepwise_support import FakeSession


def finish(summary: str) -> str:
    """Report the final result."""
    return summary


def make(
    hook: TurnContinuationHook, *script: ScriptedResponse
) -> tuple[FakeSession, ScriptedModelClient]:
    model = ScriptedModelClient(script)
    definition = AgentDefinition(
        tools=[tool(finish, policy=ToolPolicy(effect=ToolEffect.READ))],
        model=model,
        decide_turn_continuation=hook,
    )
    return FakeSession(runner=StepwiseRunner(definition)), model


def test_a_continuation_after_an_answer_stores_it_and_calls_again() -> None:
    seen: list[TurnContinuationContext] = []

    def hook(context: TurnContinuationContext) -> TurnContinuationDecision:
        seen.append(context)
        return TurnContinuation(message="Check it.") if context.text == "Draft." else None

    session, model = make(hook, scripted_answer("Draft."), scripted_answer("Checked."))
    session.start_turn("Write it.")
    first = session.run_model()
    assert isinstance(first, TurnContinued)
    assert [(m.role, m.text) for m in first.new_messages] == [
        (MessageRole.ASSISTANT, "Draft."),
        (MessageRole.USER, "Check it."),
    ]
    envelope = json.loads(first.framework_run_state)
    assert (envelope["adapter"], envelope["schema_version"]) == ("stepwise", 1)
    assert json.loads(envelope["payload"]) == {
        "items": [],
        "consecutive_continuations": 1,
    }
    second = session.run_model()
    assert isinstance(second, TurnCompleted)
    assert model.requests[1].messages[-1] == UserMessage(text="Check it.")
    assert [c.consecutive_continuations for c in seen] == [0, 1]


async def always_continue(context: TurnContinuationContext) -> TurnContinuationDecision:
    return TurnContinuation(message="Again.")


def test_more_than_eight_continuations_in_a_row_fail_the_turn() -> None:
    script = [scripted_answer(f"Answer {n}.") for n in range(MAX_CONSECUTIVE_CONTINUATIONS + 1)]
    session, _ = make(always_continue, *script)
    session.start_turn("Go")
    outcomes = [session.run_model() for _ in range(MAX_CONSECUTIVE_CONTINUATIONS + 1)]
    assert all(isinstance(o, TurnContinued) for o in outcomes[:-1])
    last = outcomes[-1]
    assert isinstance(last, TurnCompleted)
    assert last.turn_error == (
        "the turn was continued more than 8 times in a row by decide_turn_continuation"
    )
    assert [m.text for m in last.new_messages] == ["Answer 8."]


def test_end_after_tool_calls_completes_with_only_the_results() -> None:
    def hook(context: TurnContinuationContext) -> TurnContinuationDecision:
        return "end" if any(c.tool_name == "finish" for c in context.tool_calls) else None

    session, model = make(
        hook,
        scripted_tool_calls(
            ("f1", "finish", '{"summary":"all done"}'), usage=ModelUsage(input_tokens=9)
        ),
    )
    session.start_turn("Go")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    session.execute_and_record("f1")
    second = session.run_model()
    assert isinstance(second, TurnCompleted)
    assert usage_of(second) == AgentUsage()
    assert [(m.role, m.tool_output) for m in second.new_messages] == [
        (MessageRole.ASSISTANT, None),
        (MessageRole.TOOL, "all done"),
    ]
    assert len(model.requests) == 1


def test_a_continuation_after_tool_calls_follows_the_results() -> None:
    def hook(context: TurnContinuationContext) -> TurnContinuationDecision:
        return TurnContinuation(message="Now summarize.") if context.tool_calls else None

    session, model = make(
        hook,
        scripted_tool_calls(("f1", "finish", '{"summary":"x"}')),
        scripted_answer("Summary."),
    )
    session.start_turn("Go")
    session.run_model()
    session.execute_and_record("f1")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert model.requests[1].messages[-2:] == [
        ToolResultMessage(tool_call_id="f1", tool_name="finish", output="x"),
        UserMessage(text="Now summarize."),
    ]
    assert [(m.role, m.text) for m in outcome.new_messages][-2:] == [
        (MessageRole.USER, "Now summarize."),
        (MessageRole.ASSISTANT, "Summary."),
    ]


def test_end_after_an_answer_just_ends_the_turn() -> None:
    session, _ = make(lambda context: "end", scripted_answer("Done."))
    session.start_turn("Go")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert outcome.turn_error is None


def test_a_ninth_continuation_after_tool_calls_fails_the_turn_with_the_results() -> None:
    script = [scripted_answer(f"Answer {n}.") for n in range(MAX_CONSECUTIVE_CONTINUATIONS)]
    script.append(scripted_tool_calls(("f1", "finish", '{"summary":"x"}')))
    session, model = make(always_continue, *script)
    session.start_turn("Go")
    for _ in range(MAX_CONSECUTIVE_CONTINUATIONS):
        assert isinstance(session.run_model(), TurnContinued)
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.execute_and_record("f1")
    last = session.run_model()
    assert isinstance(last, TurnCompleted)
    assert last.turn_error is not None
    assert [m.role for m in last.new_messages] == [MessageRole.ASSISTANT, MessageRole.TOOL]
    assert len(model.requests) == MAX_CONSECUTIVE_CONTINUATIONS + 1


def test_tool_calls_without_a_continuation_reset_the_count() -> None:
    seen: list[int] = []

    def hook(context: TurnContinuationContext) -> TurnContinuationDecision:
        seen.append(context.consecutive_continuations)
        return TurnContinuation(message="More.") if context.text == "Draft." else None

    session, _ = make(
        hook,
        scripted_answer("Draft."),
        scripted_tool_calls(("f1", "finish", '{"summary":"x"}')),
        scripted_answer("Draft."),
        scripted_answer("Final."),
    )
    session.start_turn("Go")
    session.run_model()
    session.run_model()
    session.execute_and_record("f1")
    session.run_model()
    session.run_model()
    assert seen == [0, 1, 0, 1]
