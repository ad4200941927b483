"""A RunModel Step's graph invocation, streamed: the model's text and reasoning
become the session's `text_delta` and `reasoning_delta` events as they arrive.

LangGraph's `stream_mode="messages"` yields each chat model token (and the whole
message of a model that does not stream), so the events follow the model call
live. Messages the graph already held are never yielded again, tool messages are
not the model's, and only the top-level graph's model calls count (a subgraph's
are not the turn's answer).
"""

from __future__ import annotations

from typing import Any

from dex_agents.events import EventWriter
from dex_agents_contracts import ReasoningDeltaPayload, TextDeltaPayload
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

__all__ = ["run_streamed"]


async def run_streamed(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    graph_input: Any,
    config: RunnableConfig,
    events: EventWriter,
) -> None:
    """Runs the graph until it ends or pauses, writing its model's deltas to `events`."""
    async for message, _metadata in graph.astream(graph_input, config, stream_mode="messages"):
        if isinstance(message, AIMessage):  # an AIMessageChunk while the model streams
            write_deltas(message, events)


def write_deltas(message: AIMessage, events: EventWriter) -> None:
    """The text and reasoning blocks of one streamed piece of a response, as events."""
    for block in message.content_blocks:
        if block["type"] == "text" and block["text"]:
            events.write(TextDeltaPayload(text=block["text"]))
        elif block["type"] == "reasoning" and block.get("reasoning"):
            events.write(ReasoningDeltaPayload(text=block["reasoning"]))
