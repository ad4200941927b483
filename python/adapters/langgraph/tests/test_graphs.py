"""Plain LangGraph graphs under LangGraphRunner: a custom node before the model, a
tool node built on `defer_tool_call`, and a `create_agent` agent as a subgraph."""

from __future__ import annotations

from typing import Any

from dex_agents.offline import FakeSession
from dex_agents.runner import ToolCallsRequested, TurnCompleted
from dex_agents_contracts import MessageRole
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    LangGraphRunner,
    defer_tool_call,
)
from dex_agents_langgraph.testing import ScriptedChatModel
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph

RAN: list[str] = []


@tool
def lookup(term: str) -> str:
    """Looks a term up."""
    RAN.append(term)
    return f"{term}: found"


def _script() -> ScriptedChatModel:
    return ScriptedChatModel.of(
        AIMessage(content="", tool_calls=[{"id": "t1", "name": "lookup", "args": {"term": "dex"}}]),
        AIMessage(content="All found."),
    )


def test_a_custom_node_reruns_harmlessly_and_tools_wait_for_their_steps() -> None:
    RAN.clear()
    prepared: list[int] = []
    model = _script()

    def prepare(state: MessagesState) -> dict[str, Any]:
        prepared.append(len(state["messages"]))  # reads only: it runs once per invocation
        return {}

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: MessagesState) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        return {"messages": [defer_tool_call(call) for call in last.tool_calls]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("prepare", prepare)
    builder.add_node("model", call_model)
    builder.add_node("tools", tools)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=DexCheckpointSaver())

    session = FakeSession(LangGraphRunner(graph, tools=[lookup]))
    session.start_turn("look up dex")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert [c.tool_name for c in first.tool_calls] == ["lookup"]
    assert RAN == []
    session.execute_and_record("t1")
    assert RAN == ["dex"]
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    assert final.new_messages[-1].text == "All found."
    assert RAN == ["dex"]
    # The node before the model ran in the first Step only: a resume starts at the
    # interrupted tool node, not at the graph's start.
    assert prepared == [1]


def test_an_agent_as_a_subgraph_keeps_its_checkpoint_namespace() -> None:
    RAN.clear()
    inner = create_agent(_script(), [lookup], middleware=[DexStepMiddleware()])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", inner)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    graph = builder.compile(checkpointer=DexCheckpointSaver())

    session = FakeSession(LangGraphRunner(graph, tools=[lookup]))
    session.start_turn("look up dex")
    first = session.run_model()
    assert isinstance(first, ToolCallsRequested)
    assert RAN == []
    session.execute_and_record("t1")
    final = session.run_model()
    assert isinstance(final, TurnCompleted)
    results = [m.tool_output for m in final.new_messages if m.role == MessageRole.TOOL]
    assert results == ["dex: found"]
    assert final.new_messages[-1].text == "All found."
    assert RAN == ["dex"]
