"""Handoffs and guardrails through OpenAiAgentsRunner, with FakeSession (no Dex)."""

from __future__ import annotations

from typing import Any

import pytest
from agents import (
    Agent,
    GuardrailFunctionOutput,
    ModelResponse,
    RunContextWrapper,
    Usage,
    input_guardrail,
    output_guardrail,
)
from agents.testing import assistant_message
from dex_agents._runner.errors import TurnFailed
from dex_agents._runner.values import usage_of
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import MessageRole
from dex_agents_openai_agents import HANDOFF_EVENT, OpenAiAgentsRunner
from dex_agents_openai_agents.testing import FakeSession, RespondingModel
from pydantic import BaseModel
from support import RAN, handoff_agents, weather_agent


@pytest.fixture(autouse=True)
def _clear_runs() -> None:
    RAN.clear()


def test_a_handoff_runs_in_the_model_step_and_the_next_agent_s_tools_are_deferred() -> None:
    session = FakeSession(OpenAiAgentsRunner(handoff_agents()))
    session.start_turn("refund my order")
    first = session.run_model()
    # The SDK ran the handoff and billing's model call in the same Step.
    assert isinstance(first, ToolCallsRequested)
    assert usage_of(first).model_calls == 2
    assert [c.tool_name for c in first.tool_calls] == ["refund"]
    assert RAN == []
    handoffs = [p for kind, p in session.events.events if kind == HANDOFF_EVENT]
    assert handoffs == [{"from_agent": "triage", "to_agent": "billing"}]
    session.execute_and_record("f1")
    done = session.run_model()  # RunState.from_json resumes with billing, the current agent
    assert isinstance(done, TurnCompleted)
    assert usage_of(done).model_calls == 1
    assert session.messages[-1].text == "Billing: refunded A-1"
    assert RAN == [("refund", None)]
    calls = [m.tool_name for m in session.messages if m.role is MessageRole.ASSISTANT]
    assert calls[:2] == ["transfer_to_billing", "refund"]


@input_guardrail
def no_secrets(
    ctx: RunContextWrapper[Any], agent: Agent[Any], data: Any
) -> GuardrailFunctionOutput:
    text = str(data)
    return GuardrailFunctionOutput(
        output_info="the message asks for a password", tripwire_triggered="password" in text
    )


@output_guardrail
def no_shouting(
    ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
) -> GuardrailFunctionOutput:
    return GuardrailFunctionOutput(
        output_info="the answer shouts", tripwire_triggered=str(output).isupper()
    )


def test_an_input_guardrail_tripwire_fails_the_turn_with_the_guardrail_s_text() -> None:
    session = FakeSession(OpenAiAgentsRunner(weather_agent(input_guardrails=[no_secrets])))
    session.start_turn("weather and my password")
    # RunModel ends the turn with this text at once (its TurnFailed).
    with pytest.raises(TurnFailed) as tripped:
        session.run_model()
    assert str(tripped.value) == (
        "input guardrail 'no_secrets' tripped its tripwire: the message asks for a password"
    )
    assert RAN == []


def test_an_output_guardrail_checks_the_final_answer() -> None:
    session = FakeSession(OpenAiAgentsRunner(weather_agent(output_guardrails=[no_shouting])))
    session.start_turn("hello")
    passed = session.run_model()
    assert isinstance(passed, TurnCompleted)
    assert passed.turn_error is None

    loud = FakeSession(OpenAiAgentsRunner(_shouting_agent()))
    loud.start_turn("hello")
    with pytest.raises(TurnFailed) as tripped:
        loud.run_model()
    assert str(tripped.value) == (
        "output guardrail 'no_shouting' tripped its tripwire: the answer shouts"
    )


def _shouting_agent() -> Agent[Any]:
    return Agent(
        name="loud",
        model=RespondingModel(lambda _call: [assistant_message("HELLO")]),
        output_guardrails=[no_shouting],
    )


class City(BaseModel):
    name: str
    country: str


def test_structured_output_and_token_usage_keep_working() -> None:
    def respond(_call: Any) -> ModelResponse:
        return ModelResponse(
            output=[assistant_message('{"name": "Paris", "country": "FR"}')],
            usage=Usage(requests=1, input_tokens=12, output_tokens=7, total_tokens=19),
            response_id="resp-city",
        )

    agent: Agent[Any] = Agent(name="geo", model=RespondingModel(respond), output_type=City)
    session = FakeSession(OpenAiAgentsRunner(agent))
    session.start_turn("city of light?")
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert done.turn_error is None
    assert City.model_validate_json(done.new_messages[-1].text or "") == City(
        name="Paris", country="FR"
    )
    assert (
        usage_of(done).model_calls,
        usage_of(done).input_tokens,
        usage_of(done).output_tokens,
    ) == (
        1,
        12,
        7,
    )
    assert done.model_call_metadata is not None
    assert done.model_call_metadata.response_id == "resp-city"
