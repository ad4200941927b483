"""LangGraphRunner driven directly (no Dex) with a scripted chat model: one model
call per Step, no tool run inside it, results fed back as model-visible texts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from dex_agents import ToolPolicy, UserError
from dex_agents._runner.policies import BUILT_IN_TOOL_POLICY
from dex_agents._runner.values import policy_of, usage_of
from dex_agents.offline import FakeSession
from dex_agents.results import NO_RESULT_TEXT, OUTCOME_UNKNOWN_RESULT, USER_REJECTED_RESULT
from dex_agents.runner import (
    RunStateError,
    ToolCallsRequested,
    ToolExecutionError,
    TurnCompleted,
    TurnContinued,
)
from dex_agents_contracts import (
    MessageRole,
    ReasoningDeltaPayload,
    TextDeltaPayload,
    ToolCallStatus,
    ToolEffect,
)
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    DexToolContext,
    LangGraphRunner,
)
from dex_agents_langgraph.testing import ScriptedChatModel
from dex_agents_testing.capabilities import (
    assert_text_deltas_as_declared,
    checked_description,
    supported,
)
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import ToolException, tool


@dataclass
class Tools:
    ran: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def all(self) -> list[Any]:
        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            self.ran.append(f"get_weather:{city}")
            return f"sunny in {city}"

        @tool
        def book_trip(city: str, config: RunnableConfig) -> str:
            """Books a trip."""
            context = DexToolContext.from_config(config)
            self.keys.append((context and context.idempotency_key) or "none")
            self.ran.append(f"book_trip:{city}")
            return f"booked {city}"

        @tool
        def broken(city: str) -> str:
            """Always fails."""
            raise ToolException(f"no route to {city}")

        return [get_weather, book_trip, broken]


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


class Seen(ScriptedChatModel):
    """Remembers the messages of every model call."""

    seen: list[list[BaseMessage]] = []  # noqa: RUF012 - a pydantic field: copied per instance

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def runner_for(
    replies: list[AIMessage], tools: Tools, **kwargs: Any
) -> tuple[LangGraphRunner, Seen]:
    model = Seen(messages=iter(replies), seen=[])
    agent = create_agent(
        model,
        tools.all(),
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
    )
    return LangGraphRunner(agent, **kwargs), model


def last_tool_results(messages: list[BaseMessage]) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in messages if isinstance(m, ToolMessage)}


def test_tool_turn_defers_every_call_and_resumes_with_results() -> None:
    tools = Tools()
    runner, model = runner_for(
        [
            AIMessage(
                content="Checking.",
                tool_calls=[
                    call("get_weather", "c1", city="Paris"),
                    call("book_trip", "c2", city="Paris"),
                ],
            ),
            AIMessage(
                content="Done.",
                usage_metadata={"input_tokens": 7, "output_tokens": 2, "total_tokens": 9},
            ),
        ],
        tools,
        tool_policies={"book_trip": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    session = FakeSession(runner)
    session.start_turn("Weather and a trip to Paris?")

    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert len(model.seen) == 1
    assert tools.ran == []  # no tool runs inside RunModel, gated or not
    assert [(c.tool_call_id, c.tool_name) for c in outcome.tool_calls] == [
        ("c1", "get_weather"),
        ("c2", "book_trip"),
    ]
    assert json.loads(outcome.tool_calls[0].arguments) == {"city": "Paris"}
    assert outcome.tool_calls[1].effect is ToolEffect.NON_IDEMPOTENT_WRITE
    assert outcome.tool_calls[1].requires_approval is True

    session.execute_and_record("c1")
    session.execute_and_record("c2")
    assert tools.ran == ["get_weather:Paris", "book_trip:Paris"]
    assert tools.keys == ["session-1/turn-1/c2"]

    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert len(model.seen) == 2
    assert last_tool_results(model.seen[1]) == {"c1": "sunny in Paris", "c2": "booked Paris"}
    assert tools.ran == ["get_weather:Paris", "book_trip:Paris"]  # nothing ran again
    assert [m.role for m in final.new_messages] == [
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert final.new_messages[-1].text == "Done."
    assert usage_of(final).input_tokens == 7
    assert usage_of(final).model_calls == 1


def test_a_run_state_written_before_the_envelope_resumes_as_before() -> None:
    """`legacy_run_state.json` is what the runner wrote before the run-state envelope,
    after the first model call of this turn (captured from that encoder); a session in
    flight across the upgrade resumes from it to the same answer."""
    tools = Tools()
    runner, model = runner_for(
        [
            AIMessage(
                content="Checking.",
                tool_calls=[
                    call("get_weather", "c1", city="Paris"),
                    call("book_trip", "c2", city="Paris"),
                ],
            ),
            AIMessage(content="Done."),
        ],
        tools,
        tool_policies={"book_trip": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE)},
    )
    session = FakeSession(runner)
    session.start_turn("Weather and a trip to Paris?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    session.execute_and_record("c1")
    session.execute_and_record("c2")
    legacy = (Path(__file__).parent / "legacy_run_state.json").read_text(encoding="utf-8")
    assert json.loads(legacy)["format"] == "dex_agents_langgraph.run_state.v1"
    session.run_state = legacy
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert last_tool_results(model.seen[1]) == {"c1": "sunny in Paris", "c2": "booked Paris"}
    assert [m.role for m in final.new_messages] == [
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
    ]
    assert final.new_messages[-1].text == "Done."


def test_history_replays_on_the_next_turn() -> None:
    tools = Tools()
    runner, model = runner_for(
        [
            AIMessage(content="", tool_calls=[call("get_weather", "c1", city="Oslo")]),
            AIMessage(content="Cold."),
            AIMessage(content="Still cold."),
        ],
        tools,
    )
    session = FakeSession(runner)
    session.start_turn("Oslo?")
    session.run_model()
    session.execute_and_record("c1")
    session.run_model()
    session.start_turn("And now?")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    texts = [m.text for m in model.seen[2]]
    assert texts == ["Oslo?", "", "sunny in Oslo", "Cold.", "And now?"]


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
    tools = Tools()
    runner, model = runner_for(
        [
            AIMessage(content="", tool_calls=[call("book_trip", "c1", city="Rome")]),
            AIMessage(content="ok"),
        ],
        tools,
    )
    session = FakeSession(runner)
    session.start_turn("Rome")
    session.run_model()
    session.finish("c1", status, **fields)
    session.run_model()
    assert last_tool_results(model.seen[1]) == {"c1": expected}
    assert tools.ran == []


def test_a_tool_exception_is_a_failure_the_model_sees() -> None:
    tools = Tools()
    runner, _ = runner_for(
        [
            AIMessage(content="", tool_calls=[call("broken", "c1", city="Nowhere")]),
            AIMessage(content="ok"),
        ],
        tools,
    )
    session = FakeSession(runner)
    session.start_turn("go")
    session.run_model()
    with pytest.raises(ToolExecutionError, match="no route to Nowhere"):
        session.execute("c1")


def test_a_second_model_call_in_one_invocation_is_the_next_step() -> None:
    """A structured-output retry asks the model again: that call waits for its own Step."""
    from pydantic import BaseModel

    class Answer(BaseModel):
        city: str

    model = Seen(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[call("Answer", "s1", town="x")]),
                AIMessage(content="", tool_calls=[call("Answer", "s2", city="Paris")]),
            ]
        ),
        seen=[],
    )
    agent = create_agent(
        model,
        [],
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
        response_format=Answer,
    )
    session = FakeSession(LangGraphRunner(agent))
    session.start_turn("Where?")
    first = session.run_model()
    assert isinstance(first, TurnContinued)
    assert len(model.seen) == 1
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert len(model.seen) == 2


def test_unfinished_turn_messages_answer_every_pending_call() -> None:
    tools = Tools()
    runner, _ = runner_for(
        [
            AIMessage(
                content="",
                tool_calls=[
                    call("get_weather", "c1", city="A"),
                    call("get_weather", "c2", city="B"),
                ],
            )
        ],
        tools,
    )
    session = FakeSession(runner)
    session.start_turn("go")
    session.run_model()
    session.finish("c1", ToolCallStatus.SUCCEEDED, output="sunny")
    messages = runner.build_unfinished_turn_messages(session.context())
    assert [(m.role, m.tool_call_id, m.tool_output) for m in messages] == [
        (MessageRole.ASSISTANT, None, None),
        (MessageRole.TOOL, "c1", "sunny"),
        (MessageRole.TOOL, "c2", NO_RESULT_TEXT),
    ]


def test_a_graph_without_the_dex_saver_is_refused() -> None:
    agent = create_agent(ScriptedChatModel.of("hi"), [])
    with pytest.raises(UserError, match="checkpointer=DexCheckpointSaver"):
        LangGraphRunner(agent)


class Offered(ScriptedChatModel):
    """Remembers the tool names each model call was offered."""

    offered: list[list[str]] = []  # noqa: RUF012 - a pydantic field: copied per instance

    def bind_tools(self, tools: Any, *, tool_choice: str | None = None, **kwargs: Any) -> Any:
        self.offered.append(
            sorted(t["function"]["name"] if isinstance(t, dict) else t.name for t in tools)
        )
        return self


def test_enabled_built_ins_reach_the_model_and_their_calls_the_session() -> None:
    tools = Tools()
    model = Offered(
        messages=iter(
            [
                AIMessage(content="", tool_calls=[call("ask_user", "q1", question="Which city?")]),
                AIMessage(content="Paris it is."),
            ]
        ),
        offered=[],
    )
    agent = create_agent(
        model, tools.all(), middleware=[DexStepMiddleware()], checkpointer=DexCheckpointSaver()
    )
    session = FakeSession(LangGraphRunner(agent), enabled_built_in_tools=("ask_user",))
    session.start_turn("Book me a trip")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    (asked,) = outcome.tool_calls
    assert asked.tool_name == "ask_user"
    assert policy_of(asked) == BUILT_IN_TOOL_POLICY
    assert model.offered[0] == ["ask_user", "book_trip", "broken", "get_weather"]
    session.finish("q1", ToolCallStatus.SUCCEEDED, output="Paris")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert final.new_messages[-1].text == "Paris it is."


def test_a_tool_with_a_reserved_built_in_name_is_refused() -> None:
    @tool
    def ask_user(question: str) -> str:
        """Shadows the built-in."""
        return question

    agent = create_agent(
        ScriptedChatModel.of("hi"),
        [ask_user],
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
    )
    session = FakeSession(LangGraphRunner(agent), enabled_built_in_tools=("ask_user",))
    session.start_turn("hi")
    with pytest.raises(UserError, match="built-in tool this session enables"):
        session.run_model()


def test_describe_declares_what_the_runner_does_and_why_not_the_rest() -> None:
    runner, _ = runner_for([AIMessage(content="hello there")], Tools())
    capabilities = checked_description(runner)
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
    reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
    assert set(reasons) == {"plan_mode", "compaction"}
    session = FakeSession(runner)
    session.start_turn("hi")
    assert isinstance(session.run_model(), TurnCompleted)
    assert_text_deltas_as_declared(capabilities, session.events)


def deltas(
    session: FakeSession[LangGraphRunner], kind: type[TextDeltaPayload | ReasoningDeltaPayload]
) -> list[str]:
    return [p.text for _, p in session.events.events if isinstance(p, kind)]


def test_the_answer_streams_as_text_deltas_once_per_model_call() -> None:
    """Each Step writes only its own model call's text, piece by piece and once
    (the whole message LangGraph also sees at the node's end is not written again)."""
    tools = Tools()
    runner, _ = runner_for(
        [
            AIMessage(content="Let me check.", tool_calls=[call("get_weather", "c1", city="Oslo")]),
            AIMessage(content="It is sunny in Oslo."),
        ],
        tools,
    )
    session = FakeSession(runner)
    session.start_turn("Oslo?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    assert deltas(session, TextDeltaPayload) == ["Let", " ", "me", " ", "check."]
    session.events.events.clear()
    session.execute_and_record("c1")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    streamed = deltas(session, TextDeltaPayload)
    assert len(streamed) > 1
    assert "".join(streamed) == final.new_messages[-1].text == "It is sunny in Oslo."


def test_reasoning_blocks_stream_as_reasoning_deltas() -> None:
    reply = AIMessage(
        content=[
            {"type": "reasoning", "reasoning": "The user greets me."},
            {"type": "text", "text": "Hello!"},
        ]
    )
    runner, _ = runner_for([reply], Tools())
    session = FakeSession(runner)
    session.start_turn("hi")
    assert isinstance(session.run_model(), TurnCompleted)
    assert deltas(session, ReasoningDeltaPayload) == ["The user greets me."]
    assert deltas(session, TextDeltaPayload) == ["Hello!"]


def test_a_model_that_does_not_stream_writes_its_answer_as_one_delta() -> None:
    """`disable_streaming` is LangChain's own switch; the answer then arrives whole."""
    model = ScriptedChatModel(
        messages=iter([AIMessage(content="All at once.")]), disable_streaming=True
    )
    agent = create_agent(
        model, [], middleware=[DexStepMiddleware()], checkpointer=DexCheckpointSaver()
    )
    session = FakeSession(LangGraphRunner(agent))
    session.start_turn("hi")
    assert isinstance(session.run_model(), TurnCompleted)
    assert deltas(session, TextDeltaPayload) == ["All at once."]


def test_an_unreadable_graph_thread_is_the_kits_run_state_error() -> None:
    """A run state whose exported thread the saver cannot import: `CheckpointImportError`
    is a `RunStateError`, so RunModel ends the turn at once."""
    tools = Tools()
    runner, model = runner_for(
        [AIMessage(content="", tool_calls=[call("book_trip", "c1", city="Rome")])], tools
    )
    session = FakeSession(runner)
    session.start_turn("A trip to Rome?")
    assert isinstance(session.run_model(), ToolCallsRequested)
    state = json.loads(session.run_state or "")
    payload = json.loads(state["payload"])
    payload["thread"] = {"format": "something else"}
    session.run_state = json.dumps({**state, "payload": json.dumps(payload)})

    with pytest.raises(RunStateError, match="expected an exported thread"):
        session.run_model()
    assert len(model.seen) == 1
