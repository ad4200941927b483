"""The session's built-in tools offered to a Pydantic AI agent, and a cancelled model call.

The runner is driven directly (no Dex); the integration tests in
`integration/test_session_controls.py` run the same paths through the session Flow.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from dex_agents import UserError
from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS
from dex_agents._runner.policies import BuiltInToolName
from dex_agents.runner import ToolCallsRequested, TurnCompleted, TurnContinued
from dex_agents_contracts import MessageRole, ToolCallStatus, ToolEffect
from dex_agents_pydantic_ai import PydanticAiRunner, ReservedToolNameError
from dex_agents_pydantic_ai.testing import FakeSession, run
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolDefinition

ALL_BUILT_INS: tuple[BuiltInToolName, ...] = ("ask_user", "durable_wait", "write_todos")


@dataclass
class Offered:
    """What each model call was offered, and the tool results it received."""

    tools: list[list[ToolDefinition]] = field(default_factory=list)
    results: list[dict[str, str]] = field(default_factory=list)


def _results(messages: list[ModelMessage]) -> dict[str, str]:
    last = messages[-1]
    if not isinstance(last, ModelRequest):
        return {}
    return {
        p.tool_call_id: p.model_response_str() for p in last.parts if isinstance(p, ToolReturnPart)
    }


def _agent(offered: Offered, *calls: ToolCallPart) -> Agent[None, str | DeferredToolRequests]:
    """Calls `calls` first, then answers with the results it received."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered.tools.append(list(info.function_tools))
        offered.results.append(_results(messages))
        if offered.results[-1]:
            return ModelResponse(parts=[TextPart(json.dumps(offered.results[-1], sort_keys=True))])
        return ModelResponse(parts=list(calls))

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def lookup(key: str) -> str:
        return f"value of {key}"

    return agent


@pytest.mark.parametrize(
    "enabled",
    [(), ("ask_user",), ALL_BUILT_INS, ("write_todos", "durable_wait")],
    ids=["none", "ask_user", "all", "two"],
)
def test_enabled_built_ins_are_offered_with_the_core_definitions(
    enabled: tuple[BuiltInToolName, ...],
) -> None:
    offered = Offered()
    session = FakeSession(
        PydanticAiRunner(_agent(offered, ToolCallPart("lookup", {"key": "a"}, tool_call_id="c1"))),
        enabled_built_in_tools=enabled,
    )
    session.start_turn("go")
    session.run_model()
    (tools,) = offered.tools
    assert [t.name for t in tools] == ["lookup", *enabled]
    for tool in tools[1:]:
        core = BUILT_IN_TOOL_DEFINITIONS[tool.name]  # type: ignore[index]
        assert tool.description == core.description
        assert tool.parameters_json_schema == core.parameters
        assert tool.kind == "external"


def test_a_built_in_call_is_deferred_and_its_result_reaches_the_next_model_call() -> None:
    offered = Offered()
    agent = _agent(
        offered,
        ToolCallPart("lookup", {"key": "a"}, tool_call_id="c1"),
        ToolCallPart("ask_user", {"question": "Which one?"}, tool_call_id="q1"),
        ToolCallPart("durable_wait", {"seconds": 5, "reason": "cool down"}, tool_call_id="t1"),
    )
    session = FakeSession(PydanticAiRunner(agent), enabled_built_in_tools=ALL_BUILT_INS)
    session.start_turn("go")
    outcome = session.run_model()
    assert isinstance(outcome, ToolCallsRequested)
    assert [(c.tool_call_id, c.tool_name) for c in outcome.tool_calls] == [
        ("c1", "lookup"),
        ("q1", "ask_user"),
        ("t1", "durable_wait"),
    ]
    assert json.loads(outcome.tool_calls[1].arguments) == {"question": "Which one?"}
    # As the session records them: reads that need no approval.
    for call in outcome.tool_calls[1:]:
        assert (call.effect, call.requires_approval) == (ToolEffect.READ, False)
    assert outcome.tool_calls[0].effect is ToolEffect.UNCLASSIFIED

    answered = '{"status":"answered","answer":"the blue one"}'
    waited = '{"status":"completed","waited_seconds":5,"reason":"cool down"}'
    session.execute_and_record("c1")
    session.finish("q1", ToolCallStatus.SUCCEEDED, output=answered)
    session.finish("t1", ToolCallStatus.SUCCEEDED, output=waited)
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert offered.results[1] == {"c1": "value of a", "q1": answered, "t1": waited}
    tool_messages = [m for m in final.new_messages if m.role == MessageRole.TOOL]
    assert [(m.tool_name, m.tool_output) for m in tool_messages] == [
        ("lookup", "value of a"),
        ("ask_user", answered),
        ("durable_wait", waited),
    ]


def test_a_built_in_the_session_does_not_enable_is_an_unknown_tool() -> None:
    offered = Offered()
    agent = _agent(offered, ToolCallPart("ask_user", {"question": "?"}, tool_call_id="q1"))
    session = FakeSession(PydanticAiRunner(agent), enabled_built_in_tools=("write_todos",))
    session.start_turn("go")
    outcome = session.run_model()
    # Pydantic AI answers a call of a tool it does not know with a retry, as for any name.
    assert isinstance(outcome, TurnContinued)
    assert [t.name for t in offered.tools[0]] == ["lookup", "write_todos"]


def _agent_with_tool_named(name: str) -> Agent[None, str | DeferredToolRequests]:
    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(lambda _m, _i: ModelResponse(parts=[TextPart("hello")])),
        output_type=[str, DeferredToolRequests],
    )

    async def own(question: str) -> str:
        return f"own answer to {question}"

    agent.tool_plain(name=name)(own)
    return agent


def test_an_application_tool_cannot_take_an_enabled_built_in_name() -> None:
    session = FakeSession(
        PydanticAiRunner(_agent_with_tool_named("ask_user")), enabled_built_in_tools=ALL_BUILT_INS
    )
    session.start_turn("go")
    with pytest.raises(ReservedToolNameError, match="'ask_user'") as raised:
        session.run_model()
    assert raised.value.tool_name == "ask_user"
    assert isinstance(raised.value, UserError)
    # It fails a Step attempt, so it must survive the trip as an exception.
    copy = pickle.loads(pickle.dumps(raised.value))
    assert (copy.tool_name, str(copy)) == ("ask_user", str(raised.value))


def test_a_disabled_built_in_name_is_an_ordinary_tool_name() -> None:
    session = FakeSession(
        PydanticAiRunner(_agent_with_tool_named("ask_user")),
        enabled_built_in_tools=("durable_wait",),
    )
    session.start_turn("go")
    outcome = session.run_model()
    assert isinstance(outcome, TurnCompleted)
    assert outcome.new_messages[-1].text == "hello"


# --- cancellation --------------------------------------------------------------------


@dataclass
class HeldModel:
    """A model call that waits until cancelled, and what became of it."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False
    finished: bool = False

    async def hold(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()  # never set: only cancellation ends it
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        self.finished = True


@pytest.mark.parametrize("stream", [False, True], ids=["request", "streamed"])
def test_cancelling_the_step_coroutine_cancels_the_held_model_call(stream: bool) -> None:
    held = HeldModel()
    beats: list[int] = []

    async def model(_: list[ModelMessage], __: AgentInfo) -> ModelResponse:
        await held.hold()
        return ModelResponse(parts=[TextPart("too late")])

    async def stream_model(_: list[ModelMessage], __: AgentInfo) -> AsyncIterator[str]:
        yield "partial "
        await held.hold()
        yield "too late"

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model, stream_function=stream_model),
        output_type=[str, DeferredToolRequests],
    )

    async def heartbeat() -> None:
        beats.append(1)

    session = FakeSession(
        PydanticAiRunner(agent, stream=stream, heartbeat_interval_seconds=0.01),
        heartbeat=heartbeat,
    )
    session.start_turn("go")

    async def cancel_while_held() -> None:
        task = asyncio.create_task(session.runner.run_model_step(session.context()))
        await held.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # The heartbeats stopped with the call.
        count = len(beats)
        await asyncio.sleep(0.05)
        assert len(beats) == count

    run(cancel_while_held())
    assert held.cancelled
    assert not held.finished
