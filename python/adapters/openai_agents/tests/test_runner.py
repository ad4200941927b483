"""OpenAiAgentsRunner driven through the core's FakeSession: no Dex, no key, no network."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from agents import Agent, FunctionTool
from dex_agents import ToolPolicy, UserError
from dex_agents._runner.errors import TurnFailed
from dex_agents._runner.values import policy_of, usage_of
from dex_agents.results import NO_RESULT_TEXT
from dex_agents.runner import (
    RunStateError,
    ToolCallsRequested,
    ToolExecutionError,
    TurnCompleted,
)
from dex_agents_contracts import (
    MessageRole,
    TextDeltaPayload,
    ToolCallStatus,
    ToolEffect,
    decode_run_state_envelope,
    encode_run_state_envelope,
)
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents.testing import FakeSession
from dex_agents_testing.capabilities import (
    assert_text_deltas_as_declared,
    checked_description,
    supported,
)
from support import RAN, weather_agent


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    RAN.clear()


def _session(**kwargs: object) -> FakeSession:
    return FakeSession(OpenAiAgentsRunner(weather_agent(), **kwargs))  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [True, False])
def test_a_read_tool_turn_defers_the_call_and_resumes_with_its_result(stream: bool) -> None:
    session = _session(
        tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)}, stream=stream
    )
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
    assert first.model_call_metadata.request_model == "responding-model"
    envelope = decode_run_state_envelope(first.framework_run_state)
    assert (envelope.adapter, envelope.schema_version) == ("openai_agents", 1)
    assert envelope.framework_version.startswith("openai-agents ")
    assert json.loads(envelope.payload)["sdk_state"]["$schemaVersion"]

    session.execute_and_record("w1")
    assert RAN == [("get_weather", "session-1/turn-1/w1")]
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert done.turn_error is None
    assert usage_of(done).model_calls == 1
    assert RAN == [("get_weather", "session-1/turn-1/w1")]  # the stored result, not a rerun
    assert [(m.role, m.tool_call_id) for m in session.messages] == [
        (MessageRole.USER, None),
        (MessageRole.ASSISTANT, "w1"),
        (MessageRole.TOOL, "w1"),
        (MessageRole.ASSISTANT, None),
    ]
    assert session.messages[1].tool_name == "get_weather"
    assert session.messages[2].tool_name == "get_weather"
    assert session.messages[2].tool_output == "sunny in Paris"
    assert session.messages[3].text == "Results: w1=sunny in Paris"

    session.start_turn("thanks")
    again = session.run_model()
    assert isinstance(again, TurnCompleted)
    assert session.messages[-1].text == "I have seen 5 items."


def test_streaming_writes_text_deltas() -> None:
    session = _session()
    session.start_turn("hello")
    session.run_model()
    deltas = [p for kind, p in session.events.events if isinstance(p, TextDeltaPayload)]
    assert deltas
    text = "".join(p.text for p in deltas)
    assert text == "I have seen 1 items."


def test_parallel_calls_rejections_and_approval_defaults() -> None:
    session = _session(tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)})
    session.start_turn("book Rome")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    policies = {c.tool_name: policy_of(c) for c in outcome.tool_calls}
    assert not policies["get_weather"].requires_approval
    # book_trip declares needs_approval=True and has no policy: unclassified, approved by the user.
    assert policies["book_trip"].effect is ToolEffect.UNCLASSIFIED
    assert policies["book_trip"].requires_approval
    session.execute_and_record("r1")
    session.finish("k1", ToolCallStatus.REJECTED, rejection_message="Not this week.")
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Results: r1=sunny in Rome; k1=Not this week."
    assert [name for name, _ in RAN] == ["get_weather"]


def test_a_failing_tool_is_a_failure_the_model_sees() -> None:
    session = _session()
    session.start_turn("explode")
    session.run_model()
    with pytest.raises(ToolExecutionError) as raised:
        session.execute("x1")
    # The tool's failure formatter (the SDK's default here) words what the model sees.
    assert raised.value.message == "An error occurred while running the tool. Please try again."
    session.execute_and_record("x1")
    session.run_model()
    assert session.messages[2].tool_output == f"The tool call failed: {raised.value.message}"


def test_outcome_unknown_is_approved_with_the_unknown_text() -> None:
    session = _session()
    session.start_turn("weather")
    session.run_model()
    session.finish("w1", ToolCallStatus.OUTCOME_UNKNOWN)
    session.run_model()
    assert session.messages[2].tool_output is not None
    assert "unknown" in session.messages[2].tool_output.lower()
    assert RAN == []


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
    with pytest.raises(RunStateError, match="not written by the openai_agents adapter"):
        session.run_model()


def test_a_run_state_written_before_the_envelope_resumes_as_before() -> None:
    """`legacy_run_state.json` is what the runner wrote before the run-state envelope,
    after this turn's first model call (captured from that encoder); a session in
    flight across the upgrade resumes from it to the same answer."""
    session = _session(tool_policies={"get_weather": ToolPolicy(effect=ToolEffect.READ)})
    session.start_turn("weather in Paris?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.execute_and_record("w1")
    legacy = (Path(__file__).parent / "legacy_run_state.json").read_text(encoding="utf-8")
    assert json.loads(legacy)["version"] == 1
    session.run_state = legacy
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert done.turn_error is None
    assert session.messages[-1].text == "Results: w1=sunny in Paris"


def test_a_schema_version_the_sdk_refuses_fails_the_turn_clearly() -> None:
    session = _session()
    session.start_turn("weather")
    session.run_model()
    session.execute_and_record("w1")
    envelope = decode_run_state_envelope(session.run_state or "")
    state = json.loads(envelope.payload)
    state["sdk_state"]["$schemaVersion"] = "0.1"
    session.run_state = encode_run_state_envelope(
        dataclasses.replace(envelope, payload=json.dumps(state))
    )
    # RunModel ends the turn with this text at once (its TurnFailed).
    with pytest.raises(TurnFailed) as failed:
        session.run_model()
    assert str(failed.value).startswith(
        "cannot resume the turn: the OpenAI Agents SDK refused the stored RunState: "
    )
    assert "schema version is not supported" in str(failed.value)


def test_an_agent_with_mcp_servers_is_refused() -> None:
    agent = weather_agent()
    agent.mcp_servers = [object()]  # type: ignore[list-item]
    with pytest.raises(UserError, match="mcp_servers"):
        OpenAiAgentsRunner(agent)


def test_the_application_agent_is_left_ungated() -> None:
    agent = weather_agent()
    OpenAiAgentsRunner(agent)
    tools = {t.name: t for t in agent.tools if hasattr(t, "needs_approval")}
    assert tools["get_weather"].needs_approval is False
    assert isinstance(agent, Agent)


def test_a_needs_approval_callable_decides_per_call() -> None:
    async def only_rome(_ctx: object, arguments: dict[str, object], _call_id: str) -> bool:
        return arguments.get("city") == "Rome"

    agent = weather_agent()
    agent.tools = [
        dataclasses.replace(t, needs_approval=only_rome) if t.name == "get_weather" else t
        for t in agent.tools
        if isinstance(t, FunctionTool)
    ]
    session = FakeSession(
        OpenAiAgentsRunner(agent, tool_policies={"book_trip": ToolPolicy(effect=ToolEffect.READ)})
    )
    session.start_turn("book Rome")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    approvals = {c.tool_name: c.requires_approval for c in outcome.tool_calls}
    # get_weather(Rome) asks for approval by its callable; book_trip's explicit policy wins
    # over its needs_approval=True.
    assert approvals == {"get_weather": True, "book_trip": False}


def test_a_call_of_an_unknown_tool_is_a_failure_the_model_sees() -> None:
    session = _session()
    session.start_turn("weather")
    session.run_model()
    session.tool_calls[0] = dataclasses.replace(session.tool_calls[0], tool_name="gone")
    with pytest.raises(ToolExecutionError, match="no function tool named 'gone'"):
        session.execute("w1")


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
        "plan_mode",
        "tool_cancellation",
        "tracing",
        "unfinished_turn_messages",
        "tool_task_polls",
        "tool_task_cancels",
    }
    reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
    assert set(reasons) == {"compaction"}
    session.start_turn("hello")
    session.run_model()
    assert_text_deltas_as_declared(capabilities, session.events)
