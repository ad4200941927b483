"""AdkRunner driven through the core's FakeSession: no Dex, no key, no network."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from dex_agents import ToolPolicy
from dex_agents._runner.built_ins import ReservedToolNameError
from dex_agents._runner.policies import BUILT_IN_TOOL_POLICY
from dex_agents._runner.values import policy_of, usage_of
from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import (
    FrameworkItemError,
    RunStateError,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    TurnCompleted,
)
from dex_agents_contracts import (
    MessageRole,
    ToolCallStatus,
    ToolEffect,
    decode_run_state_envelope,
)
from dex_agents_google_adk import AdkRunner
from dex_agents_google_adk.testing import (
    FakeSession,
    ScriptedLlm,
    call,
    declarations,
    function_results,
    prompts,
    text,
)
from dex_agents_testing.capabilities import (
    assert_text_deltas_as_declared,
    checked_description,
    supported,
)
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from support import RAN, get_weather, weather_agent


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    RAN.clear()


def _session(**kwargs: object) -> FakeSession:
    return FakeSession(AdkRunner(weather_agent(), **kwargs))  # type: ignore[arg-type]


def test_a_read_tool_turn_defers_the_call_and_resumes_the_same_invocation() -> None:
    session = _session(tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)})
    session.start_turn("weather in Paris?")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    (call,) = first.tool_calls
    assert (call.tool_call_id, call.tool_name, json.loads(call.arguments)) == (
        "w1",
        "get_weather",
        {"city": "Paris"},
    )
    assert call.effect is ToolEffect.READ
    assert not call.requires_approval
    assert RAN == []  # nothing ran inside RunModel
    assert usage_of(first).model_calls == 1
    assert first.model_call_metadata is not None
    assert first.model_call_metadata.request_model == "scripted"
    envelope = decode_run_state_envelope(first.framework_run_state)
    assert (envelope.adapter, envelope.schema_version) == ("google_adk", 1)
    invocation = json.loads(envelope.payload)["invocation_id"]
    assert invocation

    session.execute_and_record("w1")
    assert RAN == [("get_weather", "session-1/turn-1/w1")]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert done.turn_error is None
    assert usage_of(done).model_calls == 1
    assert RAN == [("get_weather", "session-1/turn-1/w1")]
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "w1"),
        (MessageRole.TOOL, "w1"),
        (MessageRole.ASSISTANT, None),
    ]
    assert session.messages[2].tool_output == "sunny in Paris"
    assert session.messages[3].text == "Results: w1=sunny in Paris"
    # The resumed invocation is the original one: every stored event carries its ID.
    assert {json.loads(m.framework_item)["invocation_id"] for m in session.messages[1:]} == {
        invocation
    }

    session.start_turn("thanks")
    again = session.run_model()
    assert isinstance(again, TurnCompleted)
    assert session.messages[-1].text == "I have seen 5 contents."


def test_parallel_calls_rejections_and_the_tools_own_confirmation() -> None:
    session = _session(tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)})
    session.start_turn("book Rome")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    policies = {c.tool_name: policy_of(c) for c in outcome.tool_calls}
    assert not policies["get_weather"].requires_approval
    # book_trip declares require_confirmation=True: a Dex approval of an unclassified call.
    assert policies["book_trip"].effect is ToolEffect.UNCLASSIFIED
    assert policies["book_trip"].requires_approval
    session.execute_and_record("r1")
    session.finish("k1", ToolCallStatus.REJECTED, rejection_message="Not this week.")
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Results: r1=sunny in Rome; k1=Not this week."
    assert [name for name, _ in RAN] == ["get_weather"]
    # One stored message per call and per response, joined back into ADK's events.
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "r1"),
        (MessageRole.ASSISTANT, "k1"),
        (MessageRole.TOOL, "r1"),
        (MessageRole.TOOL, "k1"),
        (MessageRole.ASSISTANT, None),
    ]
    session.start_turn("hello")
    session.run_model()
    assert session.messages[-1].text == "I have seen 5 contents."  # the pieces joined


def test_a_tool_returning_an_object_reaches_the_model_as_that_object() -> None:
    session = _session()
    session.start_turn("book Rome")
    session.run_model()
    session.execute_and_record("r1")
    session.execute_and_record("k1")
    session.run_model()
    assert session.messages[-1].text == (
        'Results: r1=sunny in Rome; k1={"booking": "booked Rome", "seats": 1}'
    )


def test_a_failing_tool_fails_its_step_and_outcome_unknown_reaches_the_model() -> None:
    session = _session()
    session.start_turn("explode")
    session.run_model()
    with pytest.raises(RuntimeError, match="no weather station"):
        session.execute("x1")
    session.finish("x1", ToolCallStatus.OUTCOME_UNKNOWN)
    session.run_model()
    output = session.messages[2].tool_output
    assert output is not None
    assert "unknown" in output.lower()


def test_unfinished_turn_messages_answer_every_pending_call() -> None:
    session = _session()
    session.start_turn("book Rome")
    session.run_model()
    session.execute_and_record("r1")
    messages = session.runner.build_unfinished_turn_messages(session.context())
    assert [(m.role, m.tool_call_id, m.tool_output) for m in messages] == [
        (MessageRole.ASSISTANT, "r1", None),
        (MessageRole.ASSISTANT, "k1", None),
        (MessageRole.TOOL, "r1", "sunny in Rome"),
        (MessageRole.TOOL, "k1", NO_RESULT_TEXT),
    ]


def test_a_state_from_another_runner_fails_the_turn_clearly() -> None:
    session = _session()
    session.start_turn("weather")
    session.run_state = '{"messages": []}'
    # The kit's error, which RunModel turns into the turn's end without a retry.
    with pytest.raises(RunStateError, match="not written by the google_adk adapter"):
        session.run_model()


def test_a_run_state_written_before_the_envelope_resumes_as_before() -> None:
    """`legacy_run_state.json` is what the runner wrote before the run-state envelope,
    after this turn's first model call (captured from that encoder); a session in
    flight across the upgrade resumes that invocation to the same answer."""
    session = _session(tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)})
    session.start_turn("weather in Paris?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.execute_and_record("w1")
    legacy = (Path(__file__).parent / "legacy_run_state.json").read_text(encoding="utf-8")
    invocation = json.loads(legacy)["invocation_id"]
    session.run_state = legacy
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert done.turn_error is None
    assert session.messages[-1].text == "Results: w1=sunny in Paris"
    assert json.loads(session.messages[-1].framework_item)["invocation_id"] == invocation


def test_the_application_agent_is_left_as_it_was() -> None:
    agent = weather_agent()
    before = list(agent.tools)
    AdkRunner(agent)
    assert agent.tools == before


def test_the_recorded_result_is_the_original_call_s_function_response() -> None:
    """The chosen mechanism (long-running stubs): the resumed model call receives the
    recorded result as the FunctionResponse of the model's own call ID, with nothing
    from ADK's confirmation flow around it, and the tool's declaration as the
    application wrote it (LongRunningFunctionTool would append a note to it)."""
    seen: list[LlmRequest] = []

    def respond(request: LlmRequest) -> list[types.Part]:
        seen.append(request.model_copy(deep=True))
        if function_results(request):
            return [text("done")]
        return [call("get_weather", {"city": "Paris"}, "w1")]

    agent = LlmAgent(name="weather", model=ScriptedLlm(respond), tools=[get_weather])
    session = FakeSession(AdkRunner(agent))
    session.start_turn("weather in Paris?")
    session.run_model()
    session.execute_and_record("w1")
    session.run_model()
    first, resumed = seen
    (declaration,) = declarations(first)
    assert declaration.description == "The weather in a city."
    assert [c.model_dump(exclude_none=True) for c in resumed.contents] == [
        {"role": "user", "parts": [{"text": "weather in Paris?"}]},
        {
            "role": "model",
            "parts": [
                {"function_call": {"id": "w1", "name": "get_weather", "args": {"city": "Paris"}}}
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "function_response": {
                        "id": "w1",
                        "name": "get_weather",
                        "response": {"result": "sunny in Paris"},
                    }
                }
            ],
        },
    ]


def test_before_tool_callback_argument_edits_reach_the_tool_step() -> None:
    def edit(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> None:
        args["city"] = args["city"].upper()

    session = FakeSession(AdkRunner(weather_agent(before_tool_callback=edit)))
    session.start_turn("weather")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert json.loads(outcome.tool_calls[0].arguments) == {"city": "PARIS"}
    session.execute_and_record("w1")
    session.run_model()
    assert session.messages[-1].text == "Results: w1=sunny in PARIS"


def test_after_tool_callback_runs_in_the_tool_step_on_the_real_result() -> None:
    def shout(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> dict[str, Any]:
        return {"result": str(tool_response).upper()}

    session = FakeSession(AdkRunner(weather_agent(after_tool_callback=shout)))
    session.start_turn("weather")
    session.run_model()
    result = session.execute("w1")
    assert isinstance(result, ToolExecutionResult)
    assert result.output == '{"result":"SUNNY IN PARIS"}'
    session.execute_and_record("w1")
    session.run_model()
    assert session.messages[-1].text == "Results: w1=SUNNY IN PARIS"


def test_a_callback_answering_every_call_lets_adk_call_the_model_again_in_the_step() -> None:
    def answer(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> dict[str, Any]:
        return {"result": "from the callback"}

    session = FakeSession(AdkRunner(weather_agent(before_tool_callback=answer)))
    session.start_turn("weather")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert usage_of(outcome).model_calls == 2
    assert session.messages[-1].text == "Results: w1=from the callback"
    assert RAN == []


def test_a_tool_asking_for_confirmation_in_its_step_is_a_failure_the_model_sees() -> None:
    def ask(city: str, tool_context: ToolContext) -> str:
        """Asks at run time."""
        tool_context.request_confirmation(hint="sure?")
        return city

    def respond(request: LlmRequest) -> list[types.Part]:
        if function_results(request):
            return [text("done")]
        return [call("ask", {"city": "Rome"}, "q1")]

    session = FakeSession(AdkRunner(LlmAgent(name="a", model=ScriptedLlm(respond), tools=[ask])))
    session.start_turn("ask")
    session.run_model()
    with pytest.raises(ToolExecutionError, match="asked for a confirmation inside its tool Step"):
        session.execute("q1")


def test_messages_stored_by_another_runner_fail_the_turn_clearly() -> None:
    session = _session()
    session.start_turn("weather")
    session.messages[-1] = dataclasses.replace(session.messages[-1], framework_item='{"role": 1}')
    # The kit's error, which RunModel turns into the turn's end without a retry.
    with pytest.raises(FrameworkItemError, match="a stored message is not an ADK event"):
        session.run_model()


def test_describe_declares_what_the_runner_does_and_why_not_the_rest() -> None:
    session = _session()
    capabilities = checked_description(session.runner)
    assert supported(capabilities) == {
        "text_deltas",
        "reasoning_deltas",
        "usage",
        "built_in_tools",
        "mcp_sources",
        "mcp_tasks",
        "structured_output",
        "handoffs",
        "parallel_deferred_calls",
        "tool_cancellation",
        "tracing",
        "unfinished_turn_messages",
        "tool_task_polls",
        "tool_task_cancels",
    }
    session.start_turn("hello")
    session.run_model()
    assert_text_deltas_as_declared(capabilities, session.events)


def test_enabled_built_ins_are_offered_and_deferred_with_the_built_in_policy() -> None:
    offered: list[list[str]] = []

    def respond(request: LlmRequest) -> list[types.Part]:
        offered.append(sorted(d.name or "" for d in declarations(request)))
        if function_results(request):
            return [text(f"You said {function_results(request)[0][2]}")]
        if prompts(request)[-1] == "hello":
            return [text("hi")]
        return [call("ask_user", {"question": "Which city?"}, "q1")]

    agent = LlmAgent(name="a", model=ScriptedLlm(respond), tools=[get_weather])
    plain = FakeSession(AdkRunner(agent))
    plain.start_turn("hello")
    plain.run_model()
    assert offered == [["get_weather"]]  # a session without built-ins offers none

    offered.clear()
    session = FakeSession(AdkRunner(agent), enabled_built_in_tools=("ask_user",))
    session.start_turn("ask me")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert offered == [["ask_user", "get_weather"]]
    (asked,) = first.tool_calls
    assert (asked.tool_name, json.loads(asked.arguments)) == (
        "ask_user",
        {"question": "Which city?"},
    )
    assert policy_of(asked) == BUILT_IN_TOOL_POLICY
    session.finish("q1", ToolCallStatus.SUCCEEDED, output="Lisbon")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert final.new_messages[-1].text == "You said Lisbon"


def test_an_enabled_built_in_reserves_its_name() -> None:
    def ask_user(question: str) -> str:
        """The application's own ask_user."""
        return question

    agent = LlmAgent(name="a", model=ScriptedLlm(lambda _: [text("hi")]), tools=[ask_user])
    session = FakeSession(AdkRunner(agent), enabled_built_in_tools=("ask_user",))
    session.start_turn("hello")
    with pytest.raises(ReservedToolNameError, match="the agent tree has a tool named 'ask_user'"):
        session.run_model()
