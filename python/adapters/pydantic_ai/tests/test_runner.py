"""PydanticAiRunner driven directly (no Dex): one model call per Step, every tool
deferred, results fed back with the design document's model-visible texts."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dex_agents import ToolPolicy
from dex_agents.results import OUTCOME_UNKNOWN_RESULT, USER_REJECTED_RESULT
from dex_agents.runner import ToolCallsRequested, TurnCompleted, TurnContinued
from dex_agents_contracts import MessageRole, ToolCallStatus, ToolEffect
from dex_agents_pydantic_ai.testing import FakeSession
from pydantic_ai import Agent, DeferredToolRequests, ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

Reply = Callable[[list[ModelMessage], AgentInfo], ModelResponse]


@dataclass
class Script:
    """A FunctionModel script: one reply per model call, and what each call saw."""

    replies: list[Reply]
    seen: list[list[ModelMessage]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(list(messages))
        return self.replies[len(self.seen) - 1](messages, info)

    @property
    def calls(self) -> int:
        return len(self.seen)


def calls(*parts: ToolCallPart, text: str | None = None) -> Reply:
    body: list[Any] = [TextPart(content=text)] if text else []
    return lambda _m, _i: ModelResponse(parts=[*body, *parts])


def answer(text: str) -> Reply:
    return lambda _m, _i: ModelResponse(parts=[TextPart(content=text)])


def last_results(messages: list[ModelMessage]) -> dict[str, str]:
    """The tool results the model received in its last request, by tool call ID."""
    results: dict[str, str] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    results[part.tool_call_id] = part.model_response_str()
    return results


@dataclass
class Tools:
    """Tool bodies that record their runs."""

    ran: list[str] = field(default_factory=list)


def weather_agent(script: Script, tools: Tools) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(script), output_type=[str, DeferredToolRequests], instructions="Be brief."
    )

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """Ungated: Pydantic AI would run it right away in an ordinary run."""
        tools.ran.append(f"get_weather:{city}")
        return f"sunny in {city}"

    @agent.tool_plain(requires_approval=True)
    def book_trip(city: str) -> str:
        tools.ran.append(f"book_trip:{city}")
        return f"booked {city}"

    return agent


def test_one_model_call_per_step_and_no_tool_runs_in_run_model() -> None:
    script = Script(
        [
            calls(
                ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="c1"),
                ToolCallPart("book_trip", {"city": "Paris"}, tool_call_id="c2"),
                text="Checking.",
            ),
            answer("Done."),
        ]
    )
    tools = Tools()
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, tools)))
    session.start_turn("Weather and a trip to Paris?")

    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert script.calls == 1
    assert tools.ran == []  # neither the ungated-looking nor the gated tool ran
    assert [(c.tool_call_id, c.tool_name) for c in outcome.tool_calls] == [
        ("c1", "get_weather"),
        ("c2", "book_trip"),
    ]
    assert json.loads(outcome.tool_calls[0].arguments) == {"city": "Paris"}
    assert outcome.tool_calls[1].requires_approval is True
    assert outcome.new_messages == []

    session.execute_and_record("c1")
    session.execute_and_record("c2")
    assert tools.ran == ["get_weather:Paris", "book_trip:Paris"]

    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert script.calls == 2
    assert last_results(script.seen[1]) == {"c1": "sunny in Paris", "c2": "booked Paris"}
    assert tools.ran == ["get_weather:Paris", "book_trip:Paris"]  # nothing ran again
    roles = [m.role for m in final.new_messages]
    assert roles == [
        MessageRole.ASSISTANT,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert final.new_messages[-1].text == "Done."


@pytest.mark.parametrize(
    ("status", "fields", "expected"),
    [
        (ToolCallStatus.SUCCEEDED, {"output": "sunny"}, "sunny"),
        (ToolCallStatus.FAILED, {"error": "boom"}, "The tool call failed: boom"),
        (ToolCallStatus.REJECTED, {"rejection_message": "not now"}, "not now"),
        (ToolCallStatus.REJECTED, {}, USER_REJECTED_RESULT),
        (ToolCallStatus.OUTCOME_UNKNOWN, {"error": "worker died"}, OUTCOME_UNKNOWN_RESULT),
    ],
    ids=["succeeded", "failed", "rejected-message", "rejected-default", "outcome-unknown"],
)
def test_resume_shows_model_visible_result(
    status: ToolCallStatus, fields: dict[str, str], expected: str
) -> None:
    script = Script(
        [calls(ToolCallPart("book_trip", {"city": "Rome"}, tool_call_id="c1")), answer("ok")]
    )
    tools = Tools()
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, tools)))
    session.start_turn("Book Rome")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.finish("c1", status, **fields)
    assert isinstance(session.run_model(), TurnCompleted)
    assert last_results(script.seen[1]) == {"c1": expected}
    assert tools.ran == []


def test_a_run_state_written_before_the_envelope_resumes_as_before() -> None:
    """`legacy_run_state.json` is what the runner wrote before the run-state envelope,
    after the first model call of this turn (captured from that encoder); a session in
    flight across the upgrade resumes from it to the same answer."""
    script = Script(
        [
            calls(
                ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="c1"),
                ToolCallPart("book_trip", {"city": "Paris"}, tool_call_id="c2"),
                text="Checking.",
            ),
            answer("Done."),
        ]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("Weather and a trip to Paris?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.execute_and_record("c1")
    session.execute_and_record("c2")
    legacy = (Path(__file__).parent / "legacy_run_state.json").read_text(encoding="utf-8")
    assert json.loads(legacy)["format"] == "dex_agents_pydantic_ai.run_state.v1"
    session.run_state = legacy
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert last_results(script.seen[1]) == {"c1": "sunny in Paris", "c2": "booked Paris"}
    assert [m.role for m in final.new_messages] == [
        MessageRole.ASSISTANT,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert final.new_messages[-1].text == "Done."


def test_exact_outcome_unknown_text() -> None:
    assert OUTCOME_UNKNOWN_RESULT == (
        "The tool call's outcome is unknown: it stopped without returning a result, so it may "
        "or may not have taken effect. It will not be retried automatically."
    )
    assert USER_REJECTED_RESULT == "The user rejected this tool call."


def _dumps(messages: list[ModelMessage]) -> list[object]:
    return list(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))


def test_history_replays_unchanged_next_turn() -> None:
    script = Script(
        [
            calls(
                ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id="c1"),
                ToolCallPart("get_weather", {"city": "Bergen"}, tool_call_id="c2"),
                text="Two cities.",
            ),
            answer("Cold."),
            answer("Still cold."),
        ]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("Oslo and Bergen?")
    session.run_model()
    session.execute_and_record("c1")
    session.execute_and_record("c2")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    # One stored message per tool call and per tool result, each with its own fields.
    assert [(m.role.name.lower(), m.tool_call_id) for m in session.messages] == [
        ("user", None),
        ("assistant", "c1"),
        ("assistant", "c2"),
        ("tool", "c1"),
        ("tool", "c2"),
        ("assistant", None),
    ]
    assert session.messages[1].text == "Two cities."

    session.start_turn("And now?")
    assert isinstance(session.run_model(), TurnCompleted)
    first_turn, replayed = script.seen[1], script.seen[2]
    # The next turn's model call sees the first turn's response and results exactly as
    # Pydantic AI wrote them (the user request differs only by the instructions
    # Pydantic AI adds to the request it sends).
    assert _dumps(replayed[1:3]) == _dumps(first_turn[1:3])
    assert len(replayed) == 5
    assert isinstance(replayed[3], ModelResponse)
    assert replayed[3].parts == [TextPart(content="Cold.")]
    assert last_results(replayed) == {"c1": "sunny in Oslo", "c2": "sunny in Bergen"}
    # Every message Pydantic AI wrote names the session's Flow as its conversation.
    assert {m.conversation_id for m in replayed[1:]} == {"session-1"}


def test_stored_messages_carry_display_fields() -> None:
    script = Script(
        [calls(ToolCallPart("get_weather", {"city": "Lima"}, tool_call_id="c1")), answer("Warm.")]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("Lima?")
    session.run_model()
    session.execute_and_record("c1")
    session.run_model()
    user, call, result, reply = session.messages
    assert (user.text, call.tool_name, call.tool_call_id) == ("Lima?", "get_weather", "c1")
    assert json.loads(call.tool_arguments or "") == {"city": "Lima"}
    assert (result.tool_call_id, result.tool_output) == ("c1", "sunny in Lima")
    assert reply.text == "Warm."
    for message in session.messages:
        assert ModelMessagesTypeAdapter.validate_json(f"[{message.framework_item}]")


def test_build_unfinished_turn_messages_answers_every_pending_call() -> None:
    script = Script(
        [
            calls(
                ToolCallPart("get_weather", {"city": "A"}, tool_call_id="c1"),
                ToolCallPart("book_trip", {"city": "B"}, tool_call_id="c2"),
            )
        ]
    )
    from dex_agents_pydantic_ai import NO_RESULT_TEXT, PydanticAiRunner

    runner = PydanticAiRunner(weather_agent(script, Tools()))
    session = FakeSession(runner)
    session.start_turn("go")
    session.run_model()
    session.finish("c1", ToolCallStatus.SUCCEEDED, output="sunny")
    # c2 still waits for approval when the turn is steered.
    messages = runner.build_unfinished_turn_messages(session.context())
    assert [(m.role, m.tool_call_id) for m in messages] == [
        (MessageRole.ASSISTANT, "c1"),
        (MessageRole.ASSISTANT, "c2"),
        (MessageRole.TOOL, "c1"),
        (MessageRole.TOOL, "c2"),
    ]
    assert [m.tool_output for m in messages[2:]] == ["sunny", NO_RESULT_TEXT]
    # Stored and loaded again, the pieces join into one response and one request.
    session.append(list(messages))
    from dex_agents_pydantic_ai._messages import history_from_stored

    history = history_from_stored(session.messages)
    assert [type(m).__name__ for m in history] == ["ModelRequest", "ModelResponse", "ModelRequest"]
    results = history[2]
    assert isinstance(results, ModelRequest)
    assert results.metadata is None
    assert {p.tool_call_id: p.content for p in results.parts if isinstance(p, ToolReturnPart)} == {
        "c1": "sunny",
        "c2": NO_RESULT_TEXT,
    }
    assert runner.build_unfinished_turn_messages(FakeSession(runner).context()) == []


def test_unfinished_turn_transcript_replays_next_turn() -> None:
    script = Script(
        [calls(ToolCallPart("get_weather", {"city": "A"}, tool_call_id="c1")), answer("fine")]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    runner = PydanticAiRunner(weather_agent(script, Tools()))
    session = FakeSession(runner)
    session.start_turn("go")
    session.run_model()
    session.finish("c1", ToolCallStatus.REJECTED, rejection_message="stopped")
    session.append(list(runner.build_unfinished_turn_messages(session.context())))
    session.start_turn("next")
    assert isinstance(session.run_model(), TurnCompleted)
    assert last_results(script.seen[1]) == {"c1": "stopped"}


def test_invalid_arguments_next_to_a_valid_call_are_not_deferred() -> None:
    script = Script(
        [
            calls(
                ToolCallPart("get_weather", {"town": "X"}, tool_call_id="bad"),
                ToolCallPart("book_trip", {"city": "Y"}, tool_call_id="c2"),
            ),
            answer("ok"),
        ]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("go")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert [c.tool_call_id for c in outcome.tool_calls] == ["c2"]
    session.finish("c2", ToolCallStatus.SUCCEEDED, output="booked")
    assert isinstance(session.run_model(), TurnCompleted)
    seen = last_results(script.seen[1])
    assert seen["c2"] == "booked"
    assert "city" in seen["bad"]  # the model sees the validation error for its bad call


def test_tool_call_id_with_slash_is_refused() -> None:
    script = Script([calls(ToolCallPart("get_weather", {"city": "A"}, tool_call_id="a/b"))])
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("go")
    with pytest.raises(ValueError, match="contains '/'"):
        session.run_model()


def test_agent_without_deferred_requests_output_is_refused() -> None:
    from dex_agents import UserError
    from dex_agents_pydantic_ai import PydanticAiRunner

    with pytest.raises(UserError, match="DeferredToolRequests"):
        PydanticAiRunner(Agent(FunctionModel(answer("x")), output_type=str))


def test_turn_continued_is_never_a_second_call_in_one_step() -> None:
    """Arguments that fail validation with nothing to defer: the retry is the next Step."""
    script = Script(
        [
            calls(ToolCallPart("get_weather", {"town": "X"}, tool_call_id="bad")),
            calls(ToolCallPart("get_weather", {"city": "X"}, tool_call_id="good")),
        ]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("go")
    assert isinstance(session.run_model(), TurnContinued)
    assert script.calls == 1
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert script.calls == 2
    assert [c.tool_call_id for c in outcome.tool_calls] == ["good"]


def test_policies_from_metadata_and_overrides() -> None:
    from dex_agents_pydantic_ai import PydanticAiRunner

    script = Script(
        [
            calls(
                ToolCallPart("lookup", {}, tool_call_id="c1"),
                ToolCallPart("mcp_read", {}, tool_call_id="c2"),
                ToolCallPart("mcp_put", {}, tool_call_id="c3"),
                ToolCallPart("plain", {}, tool_call_id="c4"),
                ToolCallPart("gated", {}, tool_call_id="c5"),
                ToolCallPart("overridden", {}, tool_call_id="c6"),
            )
        ]
    )
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(script), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(metadata={"dex_effect": "read"})
    def lookup() -> str:
        return ""

    @agent.tool_plain(metadata={"annotations": {"readOnlyHint": True}})
    def mcp_read() -> str:
        return ""

    @agent.tool_plain(metadata={"annotations": {"idempotentHint": True}})
    def mcp_put() -> str:
        return ""

    @agent.tool_plain
    def plain() -> str:
        return ""

    @agent.tool_plain(requires_approval=True, metadata={"dex_effect": "read"})
    def gated() -> str:
        return ""

    @agent.tool_plain(metadata={"dex_effect": "read"})
    def overridden() -> str:
        return ""

    runner = PydanticAiRunner(
        agent,
        tool_policies={"overridden": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    session = FakeSession(runner, default_tool_effect=ToolEffect.IDEMPOTENT_WRITE)
    session.start_turn("go")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    policies = {c.tool_name: (c.effect, c.requires_approval) for c in outcome.tool_calls}
    assert policies == {
        "lookup": (ToolEffect.READ, False),
        "mcp_read": (ToolEffect.READ, False),
        "mcp_put": (ToolEffect.IDEMPOTENT_WRITE, False),
        "plain": (ToolEffect.IDEMPOTENT_WRITE, False),
        "gated": (ToolEffect.READ, True),
        "overridden": (ToolEffect.NON_IDEMPOTENT_WRITE, True),
    }
    runner.default_tool_effect = ToolEffect.UNCLASSIFIED
    session.start_turn("again")
    script.seen.clear()
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    unannotated = next(c for c in outcome.tool_calls if c.tool_name == "plain")
    assert (unannotated.effect, unannotated.requires_approval) == (
        ToolEffect.UNCLASSIFIED,
        True,
    )


def test_consecutive_user_messages_start_a_turn() -> None:
    """A failure note or steered messages put several requests at the history's end,
    which Pydantic AI joins into the one request it sends."""
    script = Script(
        [
            calls(ToolCallPart("get_weather", {"city": "A"}, tool_call_id="c1")),
            answer("first"),
            answer("second"),
        ]
    )
    from dex_agents_pydantic_ai import PydanticAiRunner

    runner = PydanticAiRunner(weather_agent(script, Tools()))
    session = FakeSession(runner)
    session.start_turn("one")
    session.run_model()
    session.finish("c1", ToolCallStatus.SUCCEEDED, output="sunny")
    session.append(list(runner.build_unfinished_turn_messages(session.context())))
    session.append([runner.build_user_message("[Dex] The previous turn failed ...")])
    session.start_turn("two")
    session.append([runner.build_user_message("three")])
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    # Only the new answer is stored; nothing already stored comes back.
    assert [(m.role, m.text) for m in outcome.new_messages] == [(MessageRole.ASSISTANT, "first")]
    prompts = [
        p.content
        for p in script.seen[1][-1].parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]
    assert prompts == ["[Dex] The previous turn failed ...", "two", "three"]


def test_a_run_state_of_another_adapter_is_the_kits_run_state_error() -> None:
    """A `RunStateError`: RunModel ends the turn at once (a retry would meet it again)."""
    from dex_agents.runner import RunStateError, RunStateFormat
    from dex_agents_pydantic_ai import PydanticAiRunner

    script = Script([calls(ToolCallPart("book_trip", {"city": "Rome"}, tool_call_id="c1"))])
    session = FakeSession(PydanticAiRunner(weather_agent(script, Tools())))
    session.start_turn("A trip to Rome?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.run_state = RunStateFormat(adapter="langgraph", framework="langgraph").encode({})

    with pytest.raises(RunStateError, match="langgraph"):
        session.run_model()
    assert script.calls == 1  # the model was not called again
