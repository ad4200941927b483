"""`DexStepMiddleware`: what makes a `create_agent` agent run in Step mode.

Every tool call becomes a LangGraph interrupt instead of running: the tool node
pauses with the call, and when the runner resumes the graph with the call's
recorded Dex result, the middleware returns that result as the tool's message
without calling the tool. A second model call within one graph invocation
(a structured-output retry, say) is paused the same way before it starts, so
one RunModel Step makes one model call.

The session's enabled built-in tools (ask_user, durable_wait, write_todos)
join the model's tools in `wrap_model_call`; their calls pause the graph like
any other, and the session runs them in its own Steps.

Code a graph runs before an interrupt runs again on resume (LangGraph
re-executes the interrupted node), so the hooks only read state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import (
    ModelCallResult,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import ToolCall, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

__all__ = [
    "NEXT_MODEL_CALL_KEY",
    "TOOL_CALL_KEY",
    "DexStepMiddleware",
    "defer_tool_call",
    "step_scope",
]

TOOL_CALL_KEY = "dex_tool_call"
"""Interrupt value key of a deferred tool call: {"id", "name", "args"}."""
NEXT_MODEL_CALL_KEY = "dex_next_model_call"
"""Interrupt value key of a model call left for the next Step."""

_model_calls: ContextVar[list[int] | None] = ContextVar("dex_langgraph_model_calls", default=None)
_built_ins: ContextVar[tuple[dict[str, Any], ...]] = ContextVar(
    "dex_langgraph_built_ins", default=()
)


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
def step_scope(built_in_tools: tuple[dict[str, Any], ...] = ()) -> Iterator[None]:
    """One RunModel Step's graph invocation: its model calls are counted, and the
    session's enabled built-ins (OpenAI function specs) are offered to the model."""
    calls = _model_calls.set([0])
    offered = _built_ins.set(built_in_tools)
    try:
        yield
    finally:
        _built_ins.reset(offered)
        _model_calls.reset(calls)


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

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult[Any]:
        return handler(_with_built_ins(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult[Any]:
        return await handler(_with_built_ins(request))

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


def _with_built_ins(request: ModelRequest[Any]) -> ModelRequest[Any]:
    extra = _built_ins.get()
    return request.override(tools=[*request.tools, *extra]) if extra else request
