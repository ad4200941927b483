"""The session's built-in tools through OpenAiAgentsRunner: offered per turn as gated
function tools, their calls deferred to the session with the built-in policy, their
recorded results fed back; a tool that takes an enabled built-in's name is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, function_tool
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents._runner.built_ins import ReservedToolNameError
from dex_agents._runner.policies import BUILT_IN_TOOL_POLICY
from dex_agents._runner.values import policy_of
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import MessageRole, ToolCallStatus
from dex_agents_openai_agents import OpenAiAgentsRunner
from dex_agents_openai_agents._gating import agents_of
from dex_agents_openai_agents.testing import FakeSession, RespondingModel
from support import RAN, get_weather, handoff_agents, outputs

OFFERED: list[list[str]] = []
"""The function tools each model call was offered, by name."""


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()
    OFFERED.clear()


def asks_the_user(call: ModelCall) -> Any:
    """Asks and plans with the tools it is offered; answers from their results."""
    names = sorted(getattr(tool, "name", "") for tool in call.tools)
    OFFERED.append(names)
    answers = outputs(call)
    if answers:
        return [assistant_message("Booked for " + "; ".join(answers.values()))]
    if "write_todos" not in names:
        return [assistant_message("Where to?")]
    question = {"question": "Which city?", "choices": ["Rome", "Oslo"]}
    plan = {"todos": [{"content": "book", "status": "pending"}]}
    return [
        function_call("ask_user", question, call_id="q1"),
        function_call("write_todos", plan, call_id="t1"),
    ]


def _session(*built_ins: Any, tools: list[Any] | None = None) -> FakeSession:
    agent = Agent(name="planner", model=RespondingModel(asks_the_user), tools=tools or [])
    return FakeSession(OpenAiAgentsRunner(agent), enabled_built_in_tools=built_ins)


def test_enabled_built_ins_are_offered_and_their_calls_go_to_the_session() -> None:
    session = _session("ask_user", "write_todos", tools=[get_weather])
    session.start_turn("book me a trip")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert OFFERED == [["ask_user", "get_weather", "write_todos"]]  # not durable_wait
    assert [(c.tool_call_id, c.tool_name) for c in first.tool_calls] == [
        ("q1", "ask_user"),
        ("t1", "write_todos"),
    ]
    assert all(policy_of(c) == BUILT_IN_TOOL_POLICY for c in first.tool_calls)
    assert json.loads(first.tool_calls[0].arguments)["choices"] == ["Rome", "Oslo"]

    # The session runs built-ins in its own Steps and records their results.
    session.finish("q1", ToolCallStatus.SUCCEEDED, output="Rome")
    session.finish("t1", ToolCallStatus.SUCCEEDED, output="The plan has 1 task.")
    done = session.run_model()
    assert isinstance(done, TurnCompleted)
    assert session.messages[-1].text == "Booked for Rome; The plan has 1 task."
    tool_messages = [m for m in session.messages if m.role is MessageRole.TOOL]
    results = [(m.tool_call_id, m.tool_output) for m in tool_messages]
    assert results == [("q1", "Rome"), ("t1", "The plan has 1 task.")]
    assert RAN == []


def test_a_turn_without_built_ins_offers_none() -> None:
    session = _session(tools=[get_weather])
    session.start_turn("hello")
    assert isinstance(session.run_model(), TurnCompleted)
    assert OFFERED == [["get_weather"]]


def test_handoff_targets_offer_the_built_ins_too() -> None:
    runner = OpenAiAgentsRunner(handoff_agents())
    session = FakeSession(runner, enabled_built_in_tools=("durable_wait",))
    session.start_turn("refund order A-1")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)  # billing's refund, after the handoff
    (billing,) = [a for a in agents_of(runner._graph.start) if a.name == "billing"]
    assert "durable_wait" in [t.name for t in billing.tools]


def test_a_tool_with_an_enabled_built_in_s_name_is_refused() -> None:
    @function_tool
    def ask_user(question: str) -> str:
        """Shadows the built-in."""
        return question

    session = _session("ask_user", tools=[ask_user])
    session.start_turn("hi")
    with pytest.raises(ReservedToolNameError, match="the agent graph has a tool named 'ask_user'"):
        session.run_model()
    # Left out of the session's built-ins, the name is the application's again.
    plain = _session(tools=[ask_user])
    plain.start_turn("hi")
    assert isinstance(plain.run_model(), TurnCompleted)
    assert OFFERED[-1] == ["ask_user"]
