"""The conformance suite's app factory for Pydantic AI (a `WorkerApp` script).

The agent's FunctionModel answers what the data file's `ScriptedApp` decides
from the message history alone (never from a call counter), so a restarted
Worker answers the same way, and streams that answer (text in two pieces, so
the runner writes text deltas); its tools are `ScriptedApp.run_tool`. Run as a
script it serves the Flow (`dex_agents_testing.conformance.serve`).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents_pydantic_ai import PydanticAiRunner, dex_run_info
from dex_agents_pydantic_ai.mcp import McpSourceToolset
from dex_agents_testing.conformance import (
    Answer,
    McpSourceFactory,
    ScriptedApp,
    Traits,
    serve,
    session_options,
)
from dex_agents_testing.run_state_fixtures import ModelScript
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingPart,
    DeltaToolCall,
    FunctionModel,
    StreamFunctionDef,
)

CONFORMANCE = Traits(
    messages_after_booking=5,
    nonconforming={
        "handoff_to_billing": (
            "Pydantic AI has no handoff of a run: one agent reaches another only from "
            "inside a tool or an output function, which runs the other agent to its end "
            "within that call (docs: multi-agent-applications.md, 'Agent delegation'), so "
            "the other agent's tool calls never become the session's tool Steps"
        ),
    },
)


class City(BaseModel):
    name: str
    country: str


ModelFunction = Callable[[list[ModelMessage], AgentInfo], Awaitable[ModelResponse]]


def _response(answer: Answer | Mapping[str, Any], info: AgentInfo) -> ModelResponse:
    if isinstance(answer, Answer):
        if answer.output is not None:
            tool = info.output_tools[0].name
            return ModelResponse(parts=[ToolCallPart(tool, dict(answer.output), tool_call_id="o")])
        if answer.text is not None:
            thought = [ThinkingPart(content=answer.reasoning)] if answer.reasoning else []
            return ModelResponse(parts=[*thought, TextPart(content=answer.text)])
        calls = [(c.id, c.name, c.arguments) for c in answer.calls]
    else:
        if "text" in answer:
            return ModelResponse(parts=[TextPart(content=answer["text"])])
        calls = [(c["id"], c["name"], c["arguments"]) for c in answer["tool_calls"]]
    parts = [ToolCallPart(name, dict(args), tool_call_id=call_id) for call_id, name, args in calls]
    return ModelResponse(parts=list(parts))


def _model(app: ScriptedApp) -> ModelFunction:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests = [m for m in messages if isinstance(m, ModelRequest)]
        prompts = [
            p.content
            for m in requests
            for p in m.parts
            if isinstance(p, UserPromptPart) and isinstance(p.content, str)
        ]
        results = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        answer = await app.answer(
            prompts=prompts,
            results=[(r.tool_call_id, r.tool_name, r.model_response_str()) for r in results],
            messages=len(messages),
            retried=any(r.outcome == "retried" for r in results),
            log={"tools": [t.name for t in info.function_tools]},
        )
        return _response(answer, info)

    return model


def _streamed(model: ModelFunction) -> StreamFunctionDef:
    """`model`'s response as a stream: its text in two pieces, its reasoning and each
    tool call whole."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        response = await model(messages, info)
        for i, part in enumerate(response.parts):
            if isinstance(part, TextPart):
                half = len(part.content) // 2
                yield part.content[:half]
                yield part.content[half:]
            elif isinstance(part, ThinkingPart):
                yield {i: DeltaThinkingPart(content=part.content)}
            elif isinstance(part, ToolCallPart):
                args = part.args_as_json_str()
                yield {i: DeltaToolCall(part.tool_name, args, tool_call_id=part.tool_call_id)}

    return stream


def build_flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
    plan_mode: bool = False,
) -> AgentSessionFlow:
    """The app's agent; a case's flow adds the session's built-in tools, an MCP source or
    plan mode."""
    app = ScriptedApp(log_path)
    model = _model(app)
    toolsets = [McpSourceToolset(mcp(app.mcp_log))] if mcp else []
    return AgentSessionFlow(
        _runner(model, app, stream=_streamed(model), toolsets=toolsets),
        flow_type=flow_type,
        options=session_options(
            interrupt_deadline_seconds, built_in_tools=built_in_tools, plan_mode=plan_mode
        ),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[PydanticAiRunner[None]]:
    """The same agent with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        results = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        reply = script.next_reply(
            results=[(r.tool_name, r.model_response_str()) for r in results],
            tools=[t.name for t in info.function_tools],
        )
        return _response(reply, info)

    yield _runner(model, ScriptedApp(log_path))


def _runner(
    model: ModelFunction,
    app: ScriptedApp,
    *,
    stream: StreamFunctionDef | None = None,
    toolsets: Sequence[McpSourceToolset] = (),
) -> PydanticAiRunner[None]:
    scripted = (
        FunctionModel(model) if stream is None else FunctionModel(model, stream_function=stream)
    )
    agent: Agent[None, str | City | DeferredToolRequests] = Agent(
        scripted, output_type=[str, City, DeferredToolRequests], toolsets=toolsets
    )

    @agent.output_validator
    def validate(output: str | City | DeferredToolRequests) -> str | City | DeferredToolRequests:
        reason = app.retry_reason(output.model_dump()) if isinstance(output, City) else None
        if reason is not None:
            raise ModelRetry(reason)
        return output

    def key(ctx: RunContext[None]) -> str | None:
        info = dex_run_info(ctx)
        return info.idempotency_key if info is not None else None

    @agent.tool
    async def get_weather(ctx: RunContext[None], city: str) -> str:
        return await app.run_tool("get_weather", {"city": city}, key(ctx))

    @agent.tool(requires_approval=True)
    async def book_trip(ctx: RunContext[None], city: str) -> str:
        return await app.run_tool("book_trip", {"city": city}, key(ctx))

    @agent.tool
    async def charge(ctx: RunContext[None], usd: int) -> str:
        return await app.run_tool("charge", {"usd": usd}, key(ctx))

    @agent.tool
    async def charge_now(ctx: RunContext[None], usd: int) -> str:
        return await app.run_tool("charge_now", {"usd": usd}, key(ctx))

    return PydanticAiRunner(agent, tool_policies=app.policies())


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
