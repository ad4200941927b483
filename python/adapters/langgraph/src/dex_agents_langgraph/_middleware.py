"""`DexStepMiddleware`: what makes a `create_agent` agent run in Step mode.

Every tool call becomes a LangGraph interrupt instead of running: the tool node
pauses with the call, and when the runner resumes the graph with the call's
recorded Dex result, the middleware returns that result as the tool's message
without calling the tool. A second model call within one graph invocation
(a structured-output retry, say) is paused the same way before it starts, so
one RunModel Step makes one model call.

Code a graph runs before an interrupt runs again on resume (LangGraph
re-executes the interrupted node), so both hooks only read state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

__all__ = [
    "NEXT_MODEL_CALL_KEY",
    "TOOL_CALL_KEY",
    "DexStepMiddleware",
    "counting_model_calls",
    "defer_tool_call",
]

TOOL_CALL_KEY = "dex_tool_call"
"""Interrupt value key of a deferred tool call: {"id", "name", "args"}."""
NEXT_MODEL_CALL_KEY = "dex_next_model_call"
"""Interrupt value key of a model call left for the next Step."""

_model_calls: ContextVar[list[int] | None] = ContextVar("dex_langgraph_model_calls", default=None)


def defer_tool_call(tool_call: ToolCall) -> ToolMessage:
    """Pauses the graph on `tool_call` and returns its Dex result as the tool's message.

    `DexStepMiddleware` does this for `create_agent`; a plain graph's tool node
    calls it for each call instead of running the tool.
    """
    result = interrupt(
        {
            TOOL_CALL_KEY: {
                "id": tool_call["id"],
                "name": tool_call["name"],
                "args": tool_call["args"],
            }
        }
    )
    return ToolMessage(content=str(result), tool_call_id=tool_call["id"], name=tool_call["name"])


@contextlib.contextmanager
def counting_model_calls() -> Iterator[list[int]]:
    """Counts the model calls of one graph invocation (the runner wraps each Step in it)."""
    counter = [0]
    token = _model_calls.set(counter)
    try:
        yield counter
    finally:
        _model_calls.reset(token)


class DexStepMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Add to `create_agent(..., middleware=[...])` for `LangGraphRunner`; keep it last,
    so the other middleware's tool wrappers run inside the real tool Step instead."""

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        del state, runtime
        counter = _model_calls.get()
        if counter is None:  # invoked outside LangGraphRunner: nothing to limit
            return None
        counter[0] += 1
        if counter[0] > 1:
            interrupt({NEXT_MODEL_CALL_KEY: True})
        return None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self.before_model(state, runtime)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        del handler  # the tool runs in its own Dex Step, never here
        return defer_tool_call(request.tool_call)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        del handler
        return defer_tool_call(request.tool_call)
