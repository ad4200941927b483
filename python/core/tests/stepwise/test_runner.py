"""StepwiseRunner over scripted models: whole turns through a `FakeSession`."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from dex_agents import ToolPolicy
from dex_agents._runner.capabilities import (
    PlanModeRunner,
    ToolTaskCanceller,
    ToolTaskPoller,
    UnfinishedTurnMessageBuilder,
)
from dex_agents._runner.policies import ResolvedToolPolicy
from dex_agents._runner.values import policy_of
from dex_agents.models import (
    AssistantMessage,
    ModelToolCall,
    ModelUsage,
    ScriptedModelClient,
    ScriptedResponse,
    ToolResultMessage,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.runner import (
    AgentFrameworkRunner,
    DeferredToolOutcome,
    ToolCallsRequested,
    TurnCompleted,
)
from dex_agents.stepwise import (
    AgentDefinition,
    InstructionContext,
    InvalidModelResponseError,
    RunStateError,
    StepwiseRunner,
    tool,
)
from dex_agents_contracts import (
    AgentUsage,
    MessageRole,
    ReasoningDeltaPayload,
    TextDeltaPayload,
    ToolCallStatus,
    ToolEffect,
)
from stepwise_support import FakeSession

READ = ToolPolicy(effect=ToolEffect.READ)
STEERED = '{"status":"cancelled","reason":"superseded_by_steered_user_message"}'


def get_weather(city: str) -> str:
    """Current weather of a city.

    Args:
        city: The city's name.
    """
    return f"Sunny in {city}"


def get_time(zone: str = "UTC") -> str:
    """Current time in a time zone."""
    return f"12:00 {zone}"


def make_session(
    *script: ScriptedResponse, instructions: str | None = "Be brief."
) -> tuple[FakeSession, ScriptedModelClient]:
    model = ScriptedModelClient(script)
    definition = AgentDefinition(
        instructions=instructions,
        tools=[tool(get_weather, policy=READ), tool(get_time, policy=READ)],
        model=model,
    )
    return FakeSession(runner=StepwiseRunner(definition)), model


def test_runner_implements_the_protocols() -> None:
    session, _ = make_session()
    runner: AgentFrameworkRunner[DeferredToolOutcome] = session.runner
    assert isinstance(runner, AgentFrameworkRunner)
    assert isinstance(runner, ToolTaskPoller)
    assert isinstance(runner, ToolTaskCanceller)
    assert isinstance(runner, UnfinishedTurnMessageBuilder)
    assert isinstance(runner, PlanModeRunner)
    assert session.runner.supports_plan_mode


def test_read_tool_then_answer() -> None:
    session, model = make_session(
        scripted_tool_calls(("call-1", "get_weather", '{"city":"Oslo"}')),
        scripted_answer("It is sunny in Oslo."),
    )
    session.start_turn("Weather in Oslo?")

    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert list(first.new_messages) == []
    [call] = first.tool_calls
    assert (call.tool_call_id, call.tool_name, call.arguments) == (
        "call-1",
        "get_weather",
        '{"city":"Oslo"}',
    )
    assert policy_of(call) == ResolvedToolPolicy(effect=ToolEffect.READ, requires_approval=False)

    session.execute_and_record("call-1")
    assert session.tool_calls[0].status == ToolCallStatus.SUCCEEDED

    second = session.run_model()
    assert isinstance(second, TurnCompleted)
    assert second.turn_error is None
    assert [(m.role, m.text, m.tool_call_id, m.tool_output) for m in second.new_messages] == [
        (MessageRole.ASSISTANT, None, "call-1", None),
        (MessageRole.TOOL, None, "call-1", "Sunny in Oslo"),
        (MessageRole.ASSISTANT, "It is sunny in Oslo.", None, None),
    ]

    first_request, second_request = model.requests
    assert first_request.instructions == "Be brief."
    assert [t.name for t in first_request.tools] == ["get_weather", "get_time"]
    assert first_request.tools[0].description == "Current weather of a city."
    assert first_request.tools[0].parameters["properties"] == {
        "city": {"description": "The city's name.", "title": "City", "type": "string"}
    }
    assert second_request.messages == [
        UserMessage(text="Weather in Oslo?"),
        AssistantMessage(
            tool_calls=(
                ModelToolCall(
                    tool_call_id="call-1", tool_name="get_weather", arguments='{"city":"Oslo"}'
                ),
            )
        ),
        ToolResultMessage(tool_call_id="call-1", tool_name="get_weather", output="Sunny in Oslo"),
    ]


def test_parallel_tool_calls_keep_call_order() -> None:
    session, model = make_session(
        scripted_tool_calls(
            ("a", "get_weather", '{"city":"Oslo"}'),
            ("b", "get_time", '{"zone":"CET"}'),
            text="Checking both.",
        ),
        scripted_answer("Done."),
    )
    session.start_turn("Weather and time?")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert [c.tool_call_id for c in first.tool_calls] == ["a", "b"]
    # Results arrive in any order; the model sees them in call order.
    session.execute_and_record("b")
    session.execute_and_record("a")
    session.run_model()
    assert model.requests[1].messages[1:] == [
        AssistantMessage(
            text="Checking both.",
            tool_calls=(
                ModelToolCall(
                    tool_call_id="a", tool_name="get_weather", arguments='{"city":"Oslo"}'
                ),
                ModelToolCall(tool_call_id="b", tool_name="get_time", arguments='{"zone":"CET"}'),
            ),
        ),
        ToolResultMessage(tool_call_id="a", tool_name="get_weather", output="Sunny in Oslo"),
        ToolResultMessage(tool_call_id="b", tool_name="get_time", output="12:00 CET"),
    ]


@dataclass(frozen=True, kw_only=True)
class ResultCase:
    id: str
    status: ToolCallStatus
    fields: dict[str, str]
    expected: str


RESULT_CASES = [
    ResultCase(
        id="succeeded",
        status=ToolCallStatus.SUCCEEDED,
        fields={"output": '{"temp":3}'},
        expected='{"temp":3}',
    ),
    ResultCase(
        id="failed",
        status=ToolCallStatus.FAILED,
        fields={"error": "city not found"},
        expected="The tool call failed: city not found",
    ),
    ResultCase(
        id="rejected-with-message",
        status=ToolCallStatus.REJECTED,
        fields={"rejection_message": "Not that city."},
        expected="Not that city.",
    ),
    ResultCase(
        id="rejected-without-message",
        status=ToolCallStatus.REJECTED,
        fields={},
        expected="The user rejected this tool call.",
    ),
    ResultCase(
        id="rejected-by-steering",
        status=ToolCallStatus.REJECTED,
        fields={"rejection_message": STEERED},
        expected=STEERED,
    ),
    ResultCase(
        id="outcome-unknown",
        status=ToolCallStatus.OUTCOME_UNKNOWN,
        fields={"error": "worker lost"},
        expected=(
            "The tool call's outcome is unknown: it stopped without returning a result, so "
            "it may or may not have taken effect. It will not be retried automatically."
        ),
    ),
]


@pytest.mark.parametrize("case", RESULT_CASES, ids=lambda c: c.id)
def test_resume_shows_the_model_visible_result(case: ResultCase) -> None:
    session, model = make_session(
        scripted_tool_calls(("call-1", "get_weather", '{"city":"Oslo"}')),
        scripted_answer("Noted."),
    )
    session.start_turn("Weather?")
    session.run_model()
    session.finish("call-1", case.status, **case.fields)
    outcome = session.run_model()
    assert model.requests[1].messages[-1] == ToolResultMessage(
        tool_call_id="call-1", tool_name="get_weather", output=case.expected
    )
    assert isinstance(outcome, TurnCompleted)
    assert outcome.new_messages[1].tool_output == case.expected


def test_resume_refuses_a_record_that_is_not_final() -> None:
    session, _ = make_session(scripted_tool_calls(("call-1", "get_weather", "{}")))
    session.start_turn("Weather?")
    session.run_model()
    with pytest.raises(RunStateError, match=r"'call-1'.*not final: its status is approved"):
        session.run_model()


def test_resume_refuses_a_missing_record() -> None:
    session, _ = make_session(scripted_tool_calls(("call-1", "get_weather", "{}")))
    session.start_turn("Weather?")
    session.run_model()
    session.tool_calls.clear()
    with pytest.raises(RunStateError, match="no tool call record for 'call-1'"):
        session.run_model()


def test_history_replays_unchanged_on_the_next_turn() -> None:
    session, model = make_session(
        scripted_tool_calls(("call-1", "get_weather", '{"city":"Oslo"}')),
        ScriptedResponse(text="Sunny.", reasoning="The tool said sunny."),
        scripted_answer("You're welcome."),
    )
    session.start_turn("Weather in Oslo?")
    session.run_model()
    session.execute_and_record("call-1")
    session.run_model()
    stored_items = [m.framework_item for m in session.messages]

    session.start_turn("Thanks!")
    session.run_model()

    assert [m.framework_item for m in session.messages[: len(stored_items)]] == stored_items
    assert json.loads(stored_items[-1]) == {
        "type": "assistant",
        "text": "Sunny.",
        "reasoning": "The tool said sunny.",
    }
    assert model.requests[2].messages == [
        *model.requests[1].messages,
        AssistantMessage(text="Sunny.", reasoning="The tool said sunny."),
        UserMessage(text="Thanks!"),
    ]
    assert [m.role for m in session.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
        MessageRole.USER,
        MessageRole.ASSISTANT,
    ]


def test_usage_of_each_model_call() -> None:
    session, _ = make_session(
        scripted_tool_calls(
            ("call-1", "get_weather", "{}"),
            usage=ModelUsage(
                input_tokens=120, output_tokens=30, cached_input_tokens=100, reasoning_tokens=12
            ),
        ),
        scripted_answer("Sunny.", usage=ModelUsage(input_tokens=200, output_tokens=5)),
    )
    session.start_turn("Weather?")
    session.run_model()
    session.execute_and_record("call-1")
    session.run_model()
    assert session.usage == [
        AgentUsage(
            model_calls=1,
            input_tokens=120,
            output_tokens=30,
            cached_input_tokens=100,
            reasoning_tokens=12,
        ),
        AgentUsage(model_calls=1, input_tokens=200, output_tokens=5),
    ]


def test_model_call_metadata_is_passed_on() -> None:
    session, _ = make_session(scripted_answer("Hi."))
    session.start_turn("Hello")
    outcome = session.run_model()
    assert outcome.model_call_metadata is not None
    assert outcome.model_call_metadata.response_id == "scripted-1"
    assert outcome.model_call_metadata.finish_reasons == ["stop"]


def test_deltas_are_written_as_events() -> None:
    session, _ = make_session(
        ScriptedResponse(
            text="It is sunny.", reasoning="Check the sky.", text_chunks=["It is ", "sunny."]
        )
    )
    session.start_turn("Weather?")
    session.run_model()
    assert session.events.events == [
        ("ReasoningDeltaPayload", ReasoningDeltaPayload(text="Check the sky.")),
        ("TextDeltaPayload", TextDeltaPayload(text="It is ")),
        ("TextDeltaPayload", TextDeltaPayload(text="sunny.")),
    ]


def test_instructions_and_model_follow_the_session_settings() -> None:
    fast = ScriptedModelClient([scripted_answer("fast")])
    slow = ScriptedModelClient([scripted_answer("slow")])

    def instructions(context: InstructionContext) -> str:
        return f"Answer in {context.session_settings.get('language', 'English')}."

    definition = AgentDefinition(
        instructions=instructions,
        model_resolver=lambda settings: fast if settings.get("tier") == "fast" else slow,
    )
    session = FakeSession(runner=StepwiseRunner(definition))
    session.session_settings = {"tier": "fast", "language": "Norwegian"}
    session.start_turn("Hi")
    session.run_model()
    assert fast.requests[0].instructions == "Answer in Norwegian."
    assert fast.requests[0].session_settings == {"tier": "fast", "language": "Norwegian"}
    assert slow.requests == []


def test_policies_session_wins_then_tool_then_default() -> None:
    def write_note(text: str) -> str:
        return text

    def delete_note(note_id: str) -> str:
        return note_id

    definition = AgentDefinition(
        tools=[
            tool(get_weather, policy=READ),
            tool(
                write_note,
                policy=ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True),
            ),
            delete_note,
        ],
        model=ScriptedModelClient(
            [
                scripted_tool_calls(
                    ("1", "get_weather", "{}"),
                    ("2", "write_note", "{}"),
                    ("3", "delete_note", "{}"),
                )
            ]
        ),
    )
    session = FakeSession(runner=StepwiseRunner(definition))
    session.tool_policies = {"get_weather": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)}
    session.start_turn("Go")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert [policy_of(c) for c in outcome.tool_calls] == [
        ResolvedToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True),
        ResolvedToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE, requires_approval=True),
        ResolvedToolPolicy(effect=ToolEffect.UNCLASSIFIED, requires_approval=True),
    ]


def test_enabled_built_ins_are_offered_and_deferred_as_reads() -> None:
    session, model = make_session(
        scripted_tool_calls(("q1", "ask_user", '{"question":"Which city?"}'))
    )
    session.enabled_built_in_tools = ("ask_user", "durable_wait")
    session.start_turn("Weather?")
    outcome = session.run_model()
    assert [t.name for t in model.requests[0].tools] == [
        "get_weather",
        "get_time",
        "ask_user",
        "durable_wait",
    ]
    assert isinstance(outcome, ToolCallsRequested)
    assert policy_of(outcome.tool_calls[0]) == ResolvedToolPolicy(
        effect=ToolEffect.READ, requires_approval=False
    )


@dataclass(frozen=True, kw_only=True)
class BadCallCase:
    id: str
    calls: tuple[tuple[str, str, str], ...]
    error: str


BAD_CALL_CASES = [
    BadCallCase(
        id="slash-in-id",
        calls=(("call/1", "get_weather", "{}"),),
        error="'get_weather' \\(ID 'call/1'\\) has a tool call ID that contains '/'",
    ),
    BadCallCase(
        id="empty-id",
        calls=(("", "get_weather", "{}"),),
        error="\\(ID ''\\) has an empty tool call ID",
    ),
    BadCallCase(
        id="duplicate-in-response",
        calls=(("x", "get_weather", "{}"), ("x", "get_time", "{}")),
        error="'get_time' \\(ID 'x'\\) reuses a tool call ID of this turn",
    ),
    BadCallCase(
        id="unknown-tool",
        calls=(("x", "launch_rocket", "{}"),),
        error="called tool 'launch_rocket' \\(ID 'x'\\), which this agent does not have; "
        "its tools are: get_weather, get_time",
    ),
]


@pytest.mark.parametrize("case", BAD_CALL_CASES, ids=lambda c: c.id)
def test_bad_tool_calls_fail_the_model_step(case: BadCallCase) -> None:
    session, _ = make_session(scripted_tool_calls(*case.calls))
    session.start_turn("Go")
    with pytest.raises(InvalidModelResponseError, match=case.error):
        session.run_model()


def test_a_tool_call_id_is_unique_across_the_turns_model_calls() -> None:
    session, _ = make_session(
        scripted_tool_calls(("x", "get_weather", "{}")),
        scripted_tool_calls(("x", "get_time", "{}")),
    )
    session.start_turn("Go")
    session.run_model()
    session.execute_and_record("x")
    with pytest.raises(InvalidModelResponseError, match="reuses a tool call ID") as raised:
        session.run_model()
    assert (raised.value.tool_call_id, raised.value.tool_name) == ("x", "get_time")


def test_tool_call_ids_may_repeat_across_turns() -> None:
    session, _ = make_session(
        scripted_tool_calls(("x", "get_weather", "{}")),
        scripted_answer("One."),
        scripted_tool_calls(("x", "get_weather", "{}")),
    )
    session.start_turn("First")
    session.run_model()
    session.execute_and_record("x")
    session.run_model()
    session.start_turn("Second")
    assert isinstance(session.run_model(), ToolCallsRequested)


def test_unfinished_turn_messages_include_every_result() -> None:
    session, _ = make_session(
        scripted_tool_calls(("a", "get_weather", "{}"), ("b", "get_time", "{}"))
    )
    session.start_turn("Go")
    session.run_model()
    session.finish("a", ToolCallStatus.SUCCEEDED, output="sunny")
    session.finish(
        "b",
        ToolCallStatus.REJECTED,
        rejection_message='{"status":"cancelled","reason":"turn_cancelled_by_user"}',
    )
    messages = session.runner.build_unfinished_turn_messages(session.context())
    assert [(m.role, m.tool_call_id, m.tool_output) for m in messages] == [
        (MessageRole.ASSISTANT, "a", None),
        (MessageRole.ASSISTANT, "b", None),
        (MessageRole.TOOL, "a", "sunny"),
        (MessageRole.TOOL, "b", '{"status":"cancelled","reason":"turn_cancelled_by_user"}'),
    ]


def test_a_bad_run_state_is_a_clear_error() -> None:
    session, _ = make_session(scripted_answer("x"))
    session.start_turn("Go")
    session.run_state = '{"something":"else"}'
    with pytest.raises(RunStateError, match="not written by the stepwise adapter"):
        session.run_model()


def test_messages_from_another_runner_replay_from_their_display_fields() -> None:
    session, model = make_session(scripted_answer("ok"))
    session.start_turn("Hello")
    session.messages[0].framework_item = '{"kind":"other-framework"}'
    session.run_model()
    assert model.requests[0].messages == [UserMessage(text="Hello")]
