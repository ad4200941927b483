"""The agent's own features under Step mode: structured output, output validators,
usage, streamed deltas, deps and the idempotency key, and tool errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from dex_agents._runner.values import usage_of
from dex_agents.runner import ToolCallsRequested, ToolExecutionError, TurnCompleted, TurnContinued
from dex_agents_contracts import AgentUsage, MessageRole, ReasoningDeltaPayload, TextDeltaPayload
from dex_agents_pydantic_ai import DexRunInfo, PydanticAiRunner, dex_run_info
from dex_agents_pydantic_ai.testing import FakeSession
from dex_agents_testing.capabilities import (
    assert_text_deltas_as_declared,
    checked_description,
    supported,
)
from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    ModelRetry,
    RunContext,
    ToolFailed,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, FunctionModel
from pydantic_ai.usage import RequestUsage


class City(BaseModel):
    name: str
    country: str


@dataclass
class Counter:
    calls: int = 0


def test_structured_output_completes_the_turn() -> None:
    counter = Counter()

    def model(_: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        counter.calls += 1
        tool = info.output_tools[0].name
        return ModelResponse(
            parts=[ToolCallPart(tool, {"name": "Paris", "country": "FR"}, tool_call_id="o1")]
        )

    agent: Agent[None, City | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[City, DeferredToolRequests]
    )
    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("Capital of France?")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert counter.calls == 1
    assert outcome.turn_error is None
    # The output tool's call and its framework-written return are both stored.
    assert [m.role for m in outcome.new_messages] == [MessageRole.ASSISTANT, MessageRole.TOOL]
    assert outcome.new_messages[0].tool_arguments is not None
    assert "Paris" in outcome.new_messages[0].tool_arguments


def validated_agent(
    counter: Counter, replies: list[str]
) -> Agent[None, City | DeferredToolRequests]:
    def model(_: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        counter.calls += 1
        name = replies[min(counter.calls, len(replies)) - 1]
        tool = info.output_tools[0].name
        return ModelResponse(
            parts=[
                ToolCallPart(
                    tool, {"name": name, "country": "FR"}, tool_call_id=f"o{counter.calls}"
                )
            ]
        )

    agent: Agent[None, City | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[City, DeferredToolRequests]
    )

    @agent.output_validator
    def capitalized(output: City | DeferredToolRequests) -> City | DeferredToolRequests:
        if isinstance(output, City) and output.name != output.name.capitalize():
            raise ModelRetry("Capitalize the city name.")
        return output

    return agent


def test_output_validator_retry_is_a_second_run_model_step() -> None:
    counter = Counter()
    session = FakeSession(PydanticAiRunner(validated_agent(counter, ["paris", "Paris"])))
    session.start_turn("Capital?")

    first = session.run_model()
    assert isinstance(first, TurnContinued)
    assert counter.calls == 1  # never a second model call inside one Step
    assert usage_of(first).model_calls == 1
    assert first.new_messages == []

    second = session.run_model()
    assert isinstance(second, TurnCompleted)
    assert counter.calls == 2
    roles = [m.role for m in second.new_messages]
    # call, retry feedback, corrected call, final-result return.
    assert roles == [
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
    ]
    assert second.new_messages[1].tool_output is not None
    assert "Capitalize the city name." in second.new_messages[1].tool_output


def test_output_retries_beyond_the_budget_fail_the_turn() -> None:
    counter = Counter()
    runner = PydanticAiRunner(validated_agent(counter, ["paris"]), max_consecutive_retries=2)
    session = FakeSession(runner)
    session.start_turn("Capital?")
    assert isinstance(session.run_model(), TurnContinued)
    assert isinstance(session.run_model(), TurnContinued)
    last = session.run_model()
    assert isinstance(last, TurnCompleted)
    assert counter.calls == 3
    assert last.turn_error is not None
    assert "more than 2 time(s)" in last.turn_error
    assert "Capitalize the city name." in last.turn_error
    # Every call has its result in the stored transcript.
    assert [m.role for m in last.new_messages] == [MessageRole.ASSISTANT, MessageRole.TOOL] * 3


def test_usage_is_mapped() -> None:
    def model(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart(content="hi")],
            usage=RequestUsage(
                input_tokens=120, output_tokens=30, cache_read_tokens=100, output_reasoning_tokens=7
            ),
        )

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )
    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("hi")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert outcome.usage == AgentUsage(
        model_calls=1,
        input_tokens=120,
        output_tokens=30,
        cached_input_tokens=100,
        reasoning_tokens=7,
    )


def test_text_and_reasoning_deltas_are_events() -> None:
    async def stream(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
        yield {0: DeltaThinkingPart(content="Let me ")}
        yield {0: DeltaThinkingPart(content="think.")}
        yield "Hel"
        yield "lo!"

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests]
    )
    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("hi")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert outcome.new_messages[-1].text == "Hello!"
    text = [p.text for _, p in session.events.events if isinstance(p, TextDeltaPayload)]
    reasoning = [p.text for _, p in session.events.events if isinstance(p, ReasoningDeltaPayload)]
    assert "".join(text) == "Hello!"
    assert "".join(reasoning) == "Let me think."
    assert {name for name, _ in session.events.events} == {
        "TextDeltaPayload",
        "ReasoningDeltaPayload",
    }


def test_streamed_tool_calls_are_deferred() -> None:
    async def stream(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
        from pydantic_ai.models.function import DeltaToolCall

        yield {0: DeltaToolCall("ping", "{}", tool_call_id="c1")}

    ran: list[str] = []
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def ping() -> str:
        ran.append("ping")
        return "pong"

    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("hi")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert ran == []


@dataclass(frozen=True)
class Deps:
    info: DexRunInfo


def keyed_agent(seen: list[tuple[str, object]]) -> Agent[Deps, str | DeferredToolRequests]:
    def model(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart("charge", {"amount": 5}, tool_call_id="c1"),
                ToolCallPart("retry_me", {}, tool_call_id="c2"),
                ToolCallPart("give_up", {}, tool_call_id="c3"),
                ToolCallPart("crash", {}, tool_call_id="c4"),
                ToolCallPart("external_thing", {}, tool_call_id="c6"),
            ]
        )

    agent: Agent[Deps, str | DeferredToolRequests] = Agent(
        FunctionModel(model), deps_type=Deps, output_type=[str, DeferredToolRequests]
    )

    @agent.tool
    def charge(ctx: RunContext[Deps], amount: int) -> dict[str, object]:
        info = dex_run_info(ctx)
        seen.append(("metadata", info))
        seen.append(("deps", ctx.deps.info))
        return {"charged": amount, "key": info.idempotency_key if info else None}

    @agent.tool_plain
    def retry_me() -> str:
        raise ModelRetry("try another card")

    @agent.tool_plain
    def give_up() -> str:
        raise ToolFailed("card declined")

    @agent.tool_plain
    def crash() -> str:
        raise RuntimeError("connection reset")

    @agent.tool_plain
    def external_thing() -> str:
        from pydantic_ai import CallDeferred

        raise CallDeferred

    return agent


def keyed_session(seen: list[tuple[str, object]]) -> FakeSession:
    runner = PydanticAiRunner(keyed_agent(seen), deps_factory=lambda info: Deps(info=info))
    session = FakeSession(runner)
    session.start_turn("pay")
    assert isinstance(session.run_model(), ToolCallsRequested)
    return session


def test_idempotency_key_reaches_the_tool() -> None:
    seen: list[tuple[str, object]] = []
    session = keyed_session(seen)
    result = session.execute("c1", attempt=2)
    assert result.output == '{"charged":5,"key":"session-1/turn-1/c1"}'
    expected = DexRunInfo(
        flow_id="session-1",
        turn_id="turn-1",
        attempt=2,
        tool_call_id="c1",
        idempotency_key="session-1/turn-1/c1",
    )
    assert seen == [("metadata", expected), ("deps", expected)]


def test_tool_runs_once_per_execution() -> None:
    seen: list[tuple[str, object]] = []
    session = keyed_session(seen)
    session.execute("c1")
    assert [kind for kind, _ in seen] == ["metadata", "deps"]


@pytest.mark.parametrize(
    ("call_id", "message"),
    [
        ("c2", "try another card"),
        ("c3", "card declined"),
        ("c6", "deferred itself"),
    ],
    ids=["model-retry", "tool-failed", "self-deferral"],
)
def test_tool_errors_the_model_should_see(call_id: str, message: str) -> None:
    session = keyed_session([])
    with pytest.raises(ToolExecutionError, match=message):
        session.execute(call_id)


def test_invalid_arguments_in_the_record_are_a_tool_error() -> None:
    """Arguments are validated again in the tool Step, as in an ordinary run."""
    session = keyed_session([])
    session.record("c1").arguments = '{"amount": "lots"}'
    with pytest.raises(ToolExecutionError, match="valid integer"):
        session.execute("c1")


def test_other_tool_exceptions_fail_the_attempt() -> None:
    session = keyed_session([])
    with pytest.raises(RuntimeError, match="connection reset"):
        session.execute("c4")


def test_unknown_tool_is_a_tool_error() -> None:
    session = keyed_session([])
    session.record("c1").tool_name = "no_such_tool"
    with pytest.raises(ToolExecutionError, match="no_such_tool"):
        session.execute("c1")


def test_public_api() -> None:
    import dex_agents_pydantic_ai

    assert set(dex_agents_pydantic_ai.__all__) == {
        "DEX_EFFECT_METADATA_KEY",
        "DEX_METADATA_KEY",
        "DexRunInfo",
        "NO_RESULT_TEXT",
        "PydanticAiRunner",
        "ReservedToolNameError",
        "RunStateError",
        "dex_run_info",
    }
    for name in dex_agents_pydantic_ai.__all__:
        assert getattr(dex_agents_pydantic_ai, name) is not None


def test_testing_api_and_core_imports() -> None:
    import ast
    from pathlib import Path

    import dex_agents_pydantic_ai
    import dex_agents_pydantic_ai.testing

    assert dex_agents_pydantic_ai.testing.__all__ == ["FakeSession", "RecordingEventWriter", "run"]
    # The adapter reaches the core only through its public modules and the kit's
    # modules under `dex_agents._runner` (architecture.md's layer table), never the
    # session's internals.
    core_modules: set[str] = set()
    for path in Path(dex_agents_pydantic_ai.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                core_modules.add(node.module)
            elif isinstance(node, ast.Import):
                core_modules.update(alias.name for alias in node.names)
    core = {m for m in core_modules if m.split(".")[0] == "dex_agents"}
    assert {"dex_agents", "dex_agents.mcp", "dex_agents.runner"} <= core
    private = {m for m in core if "._" in m and not m.startswith("dex_agents._runner.")}
    assert not private


def test_runner_satisfies_the_protocols() -> None:
    from dex_agents._runner.capabilities import UnfinishedTurnMessageBuilder
    from dex_agents.runner import AgentFrameworkRunner

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(lambda _m, _i: ModelResponse(parts=[TextPart("x")])),
        output_type=[str, DeferredToolRequests],
    )
    runner = PydanticAiRunner(agent)
    assert isinstance(runner, AgentFrameworkRunner)
    assert isinstance(runner, UnfinishedTurnMessageBuilder)


def test_external_toolset_call_is_deferred_then_fails_in_its_step() -> None:
    from pydantic_ai import ToolDefinition
    from pydantic_ai.toolsets import ExternalToolset

    def model(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("remote", {"q": 1}, tool_call_id="c1")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model),
        output_type=[str, DeferredToolRequests],
        toolsets=[ExternalToolset([ToolDefinition(name="remote")])],
    )
    session = FakeSession(PydanticAiRunner(agent))
    session.start_turn("go")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert [c.tool_name for c in outcome.tool_calls] == ["remote"]
    with pytest.raises(ToolExecutionError, match="ExternalToolset"):
        session.execute("c1")


def test_a_long_model_call_and_tool_call_heartbeat() -> None:
    import asyncio

    beats = Counter()

    async def heartbeat() -> None:
        beats.calls += 1

    async def model(messages: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        await asyncio.sleep(0.35)
        if len(messages) > 1:
            return ModelResponse(parts=[TextPart(content="done")])
        return ModelResponse(parts=[ToolCallPart("slow", {}, tool_call_id="c1")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    async def slow() -> str:
        await asyncio.sleep(0.35)
        return "ok"

    session = FakeSession(
        PydanticAiRunner(agent, heartbeat_interval_seconds=0.1), heartbeat=heartbeat
    )
    session.start_turn("go")
    assert isinstance(session.run_model(), ToolCallsRequested)
    model_beats = beats.calls
    assert model_beats >= 2
    assert session.execute("c1").output == "ok"
    assert beats.calls >= model_beats + 2


def test_describe_declares_what_the_runner_does_and_why_not_the_rest() -> None:
    async def stream(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[Any]:
        yield "Hi."

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(stream_function=stream), output_type=[str, DeferredToolRequests]
    )
    session = FakeSession(PydanticAiRunner(agent))
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
        "plan_mode",
        "tool_cancellation",
        "tracing",
        "unfinished_turn_messages",
        "tool_task_polls",
        "tool_task_cancels",
    }
    reasons = {gap.capability: gap.reason for gap in capabilities.gaps}
    assert "no handoff" in reasons["handoffs"]
    session.start_turn("hello")
    assert isinstance(session.run_model(), TurnCompleted)
    assert_text_deltas_as_declared(capabilities, session.events)
