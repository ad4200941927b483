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

from dex_agents._runner.deltas import write_deltas
from dex_agents.events import EventWriter
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
            _write_blocks(message, events)


def _write_blocks(message: AIMessage, events: EventWriter) -> None:
    """The text and reasoning blocks of one streamed piece of a response, as events."""
    for block in message.content_blocks:
        if block["type"] == "text":
            write_deltas(events, text=block["text"])
        elif block["type"] == "reasoning":
            write_deltas(events, reasoning=block.get("reasoning"))
