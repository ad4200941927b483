"""ClaudeAgentRunner with the real bundled CLI against the scripted loopback Messages API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dex_agents import ToolPolicy
from dex_agents._runner.policies import BUILT_IN_TOOL_POLICY
from dex_agents._runner.values import policy_of, usage_of
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_claude_agent_sdk._runner import max_turns_error
from dex_agents_contracts import MessageRole, ToolCallStatus, ToolEffect
from dex_agents_testing.capabilities import (
    assert_text_deltas_as_declared,
    checked_description,
    supported,
)
from dex_agents_testing.fake_anthropic import (
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)
from support import fake_agent, results_text, turn_results


def test_inline_read_turn_is_one_model_step() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("weather in Paris?")
        outcome = session.run_model()
        assert isinstance(outcome, TurnCompleted)
        assert outcome.turn_error is None
        assert agent.runs == [("get_weather", {"city": "Paris"})]
        roles = [(m.role, m.tool_call_id) for m in session.messages]
        assert roles == [
            (MessageRole.USER, None),
            (MessageRole.ASSISTANT, "w1"),
            (MessageRole.TOOL, "w1"),
            (MessageRole.ASSISTANT, None),
        ]
        assert session.messages[2].tool_output == "sunny in Paris"
        assert session.messages[-1].text == "Results: get_weather=sunny in Paris"
        assert usage_of(outcome).model_calls == 2
        assert usage_of(outcome).input_tokens > 0
        assert outcome.model_call_metadata is not None
        assert outcome.model_call_metadata.provider_name == "anthropic"
        assert outcome.model_call_metadata.response_model == "claude-scripted"
        assert agent.server.other_paths == []

        session.start_turn("thanks")
        second = session.run_model()
        assert isinstance(second, TurnCompleted)
        # The resumed session carried the whole first turn to the model.
        last = agent.server.requests[-1]
        assert last.user_texts()[0] == "weather in Paris?"
        assert last.user_texts()[-1] == "thanks"
        assert [(i, t) for i, t, _ in last.tool_results()] == [("w1", "sunny in Paris")]
        assert session.messages[-1].text == f"I have seen {len(last.messages)} messages."
        assert len(agent.runs) == 1


def test_deferred_write_runs_once_in_its_tool_step() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book Rome")
        outcome = session.run_model()
        assert isinstance(outcome, ToolCallsRequested)
        (call,) = outcome.tool_calls
        assert (call.tool_call_id, call.tool_name) == ("k1", "mcp__app__book_trip")
        assert call.effect is ToolEffect.NON_IDEMPOTENT_WRITE
        assert call.requires_approval
        assert agent.runs == [("get_weather", {"city": "Rome"})]  # the read ran inline only
        session.finish("k1", ToolCallStatus.APPROVED)
        session.execute_and_record("k1")
        assert agent.keys == ["session-1/turn-1/k1"]
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
        assert (
            session.messages[-1].text == "Results: get_weather=sunny in Rome; book_trip=booked Rome"
        )
        assert [name for name, _ in agent.runs] == ["get_weather", "book_trip"]


def test_a_run_state_written_before_the_envelope_resumes_as_before() -> None:
    """`legacy_run_state.json` is what the runner wrote before the run-state envelope,
    when this turn deferred its write (captured from that encoder with this CLI); a
    session in flight across the upgrade resumes from it to the same answer."""
    legacy = (Path(__file__).parent / "legacy_run_state.json").read_text(encoding="utf-8")
    assert json.loads(legacy)["format"] == "claude-agent-sdk/1"
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book Rome")
        assert isinstance(session.run_model(), ToolCallsRequested)
        session.finish("k1", ToolCallStatus.APPROVED)
        session.execute_and_record("k1")
        session.run_state = legacy
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
        assert (
            session.messages[-1].text == "Results: get_weather=sunny in Rome; book_trip=booked Rome"
        )
        assert [name for name, _ in agent.runs] == ["get_weather", "book_trip"]


def test_rejected_write_is_answered_from_its_record() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book Rome")
        session.run_model()
        session.finish("k1", ToolCallStatus.REJECTED, rejection_message="Not this week.")
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
        assert (
            session.messages[-1].text
            == "Results: get_weather=sunny in Rome; book_trip=Not this week."
        )
        assert [name for name, _ in agent.runs] == ["get_weather"]


def test_two_deferred_writes_of_one_response_run_one_tool_step_each_in_order() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("two bookings")
        first = session.run_model()
        assert isinstance(first, ToolCallsRequested)
        assert [c.tool_call_id for c in first.tool_calls] == ["k1"]  # the response's first
        assert agent.runs == [("get_weather", {"city": "Lima"})]  # the read ran inline
        model_calls = len(agent.server.requests)
        session.finish("k1", ToolCallStatus.APPROVED)
        session.execute_and_record("k1")

        # The second write's Step comes next, after the first ran and before Claude
        # sees any result: no model call.
        second = session.run_model()
        assert isinstance(second, ToolCallsRequested)
        (call,) = second.tool_calls
        assert (call.tool_call_id, call.tool_name) == ("k2", "mcp__app__book_trip")
        assert call.requires_approval
        assert usage_of(second).model_calls == 0
        assert len(agent.server.requests) == model_calls
        session.finish("k2", ToolCallStatus.APPROVED)
        session.execute_and_record("k2")
        assert agent.keys == ["session-1/turn-1/k1", "session-1/turn-1/k2"]

        done = session.run_model()
        assert isinstance(done, TurnCompleted)
        assert done.turn_error is None
        results = dict(turn_results(agent.server.requests[-1]))
        assert results == {
            "book_trip": "booked Oslo",  # the last of each name
            "get_weather": "sunny in Lima",
        }
        assert [(i, t) for i, t, _ in agent.server.requests[-1].tool_results()] == [
            ("w1", "sunny in Lima"),
            ("k1", "booked Rome"),
            ("k2", "booked Oslo"),
        ]
        assert [name for name, _ in agent.runs] == ["get_weather", "book_trip", "book_trip"]
        calls = [str(m.tool_call_id) for m in session.messages if m.role is MessageRole.TOOL]
        assert sorted(calls) == ["k1", "k2", "w1"]
        # The CLI's stand-in answer to the fed-back results is no message of the turn.
        texts = [m.text for m in session.messages if m.role is MessageRole.ASSISTANT and m.text]
        assert texts == [session.messages[-1].text]


def test_a_turn_stopped_between_two_deferred_writes_shows_each_call_once() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("two bookings")
        session.run_model()
        session.finish("k1", ToolCallStatus.APPROVED)
        session.execute_and_record("k1")
        assert isinstance(session.run_model(), ToolCallsRequested)  # k2's Step is next
        # Steered before k2 ran: the unfinished turn shows k1 with its result, not k2.
        shown = session.runner.build_unfinished_turn_messages(session.context())
        results = [(m.tool_call_id, m.tool_output) for m in shown if m.role == MessageRole.TOOL]
        assert results == [("k1", "booked Rome")]
        calls = [
            m.tool_call_id for m in shown if m.role == MessageRole.ASSISTANT and m.tool_call_id
        ]
        assert calls == ["k1"]


def test_a_rejected_first_write_still_lets_the_second_run_and_claude_sees_both() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("two bookings")
        assert isinstance(session.run_model(), ToolCallsRequested)
        session.finish("k1", ToolCallStatus.REJECTED, rejection_message="Not Rome.")
        second = session.run_model()
        assert isinstance(second, ToolCallsRequested)
        assert [c.tool_call_id for c in second.tool_calls] == ["k2"]
        session.finish("k2", ToolCallStatus.APPROVED)
        session.execute_and_record("k2")
        done = session.run_model()
        assert isinstance(done, TurnCompleted)
        results = {i: t for i, t, _ in agent.server.requests[-1].tool_results()}
        assert results["k1"] == "Not Rome."
        assert results["k2"] == "booked Oslo"
        assert [name for name, _ in agent.runs] == ["get_weather", "book_trip"]


def test_a_stopped_turn_shows_a_finished_call_once_and_no_call_without_its_result() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book Rome")
        session.run_model()
        session.finish("k1", ToolCallStatus.REJECTED, rejection_message="Not this week.")
        # Steered before the next RunModel: the unfinished turn is what happened.
        shown = session.runner.build_unfinished_turn_messages(session.context())
        calls = [
            m.tool_call_id for m in shown if m.role == MessageRole.ASSISTANT and m.tool_call_id
        ]
        results = [(m.tool_call_id, m.tool_output) for m in shown if m.role == MessageRole.TOOL]
        assert calls == ["k1"]
        assert results == [("k1", "Not this week.")]


def test_retried_run_model_repeats_harness_but_not_the_write() -> None:
    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book Rome")
        first = session.run_model()
        assert isinstance(first, ToolCallsRequested)
        session.run_state = None  # a retried first RunModel sees the turn as it started
        session.tool_calls = []
        again = session.run_model(attempt=2)
        assert isinstance(again, ToolCallsRequested)
        assert [name for name, _ in agent.runs] == ["get_weather", "get_weather"]


def test_cli_builtin_write_is_denied_not_prompted() -> None:
    with fake_agent() as agent:
        session = agent.session(options={"tools": ["Bash"]})
        session.start_turn("bash it")
        outcome = session.run_model()
        assert isinstance(outcome, TurnCompleted)
        text = session.messages[-1].text or ""
        assert "The tool Bash was not run" in text


def test_max_turns_bound_ends_the_turn_with_an_error() -> None:
    with fake_agent() as agent:
        session = agent.session(options={"max_turns": 3})
        session.start_turn("loop forever")
        outcome = session.run_model()
        assert isinstance(outcome, TurnCompleted)
        assert outcome.turn_error == max_turns_error(3)
        assert len(agent.runs) <= 3


def test_cli_builtin_read_runs_inline_without_a_permission_prompt() -> None:
    # Bash would ask for permission in the default mode; the hook's allow answers first.
    with fake_agent() as agent:
        session = agent.session(
            options={"tools": ["Bash"], "permission_mode": "default"},
            tool_policies={"Bash": ToolPolicy(effect=ToolEffect.READ)},
        )
        session.start_turn("bash it")
        outcome = session.run_model()
        assert isinstance(outcome, TurnCompleted)
        assert outcome.turn_error is None
        (result,) = [m for m in session.messages if m.role is MessageRole.TOOL]
        assert result.tool_output is not None
        # The last line is the command's output (a login shell may print warnings first).
        assert result.tool_output.strip().splitlines()[-1] == "hi"


def test_describe_declares_what_the_runner_does_and_why_not_the_rest() -> None:
    with fake_agent() as agent:
        session = agent.session()
        capabilities = checked_description(session.runner)
        assert supported(capabilities) == {
            "text_deltas",
            "reasoning_deltas",
            "usage",
            "built_in_tools",
            "mcp_sources",
            "mcp_tasks",
            "structured_output",
            "parallel_deferred_calls",
            "tool_cancellation",
            "tracing",
            "unfinished_turn_messages",
            "tool_task_polls",
            "tool_task_cancels",
        }
        reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
        assert "parallel_deferred_calls" not in reasons
        session.start_turn("weather in Paris?")
        assert isinstance(session.run_model(), TurnCompleted)
        assert_text_deltas_as_declared(capabilities, session.events)


def test_a_run_state_of_another_adapter_is_the_kits_run_state_error() -> None:
    """A `RunStateError`: RunModel ends the turn at once (a retry would meet it again)."""
    from dex_agents.runner import RunStateError, RunStateFormat

    with fake_agent() as agent:
        session = agent.session()
        session.start_turn("book a trip to Rome")
        session.run_state = RunStateFormat(adapter="langgraph", framework="langgraph").encode({})
        with pytest.raises(RunStateError, match="langgraph"):
            session.run_model()
        assert agent.server.requests == []  # the CLI never ran


def test_with_an_output_format_the_answer_is_the_structured_output_tool_call() -> None:
    """The CLI's StructuredOutput tool runs (it only checks the schema) when the agent
    has an output_format; the turn ends on it, its input the answer."""

    def script(request: MessagesRequest) -> ScriptedReply:
        if "StructuredOutput" in request.tool_names and not request.tool_results():
            return tool_use_reply(("o1", "StructuredOutput", {"city": "Paris"}))
        return text_reply("no structured output tool")

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    with fake_agent(script) as agent:
        session = agent.session(
            options={"output_format": {"type": "json_schema", "schema": schema}}
        )
        session.start_turn("capital of France?")
        outcome = session.run_model()
        assert isinstance(outcome, TurnCompleted)
        assert outcome.turn_error is None
        answer, result = session.messages[-2:]
        assert (answer.tool_name, json.loads(answer.tool_arguments or "")) == (
            "StructuredOutput",
            {"city": "Paris"},
        )
        assert result.role is MessageRole.TOOL
        assert result.tool_output == "Structured output provided successfully"
        assert len(agent.server.requests) == 1


def test_enabled_built_ins_are_served_to_the_cli_and_deferred_by_their_own_name() -> None:
    offered: list[list[str]] = []

    def script(request: MessagesRequest) -> ScriptedReply:
        offered.append([n for n in request.tool_names if "ask_user" in n])
        if request.owes_answer():
            return text_reply(results_text(request))
        return tool_use_reply(("q1", "mcp__dex_session__ask_user", {"question": "Which city?"}))

    with fake_agent(script) as agent:
        plain = agent.session()
        plain.start_turn("hello")
        plain.run_model()
        assert offered[0] == []  # a session without built-ins offers none

        offered.clear()
        session = agent.session()
        session.enabled_built_in_tools = ("ask_user",)
        session.start_turn("ask me")
        first = session.run_model()
        assert isinstance(first, ToolCallsRequested)
        assert offered == [["mcp__dex_session__ask_user"]]
        (asked,) = first.tool_calls
        assert (asked.tool_call_id, asked.tool_name) == ("q1", "ask_user")
        assert json.loads(asked.arguments) == {"question": "Which city?"}
        assert policy_of(asked) == BUILT_IN_TOOL_POLICY
        session.finish("q1", ToolCallStatus.SUCCEEDED, output="Lisbon")
        final = session.run_model()
        assert isinstance(final, TurnCompleted)
        assert session.messages[-1].text == "Results: ask_user=Lisbon"
        assert agent.runs == []
