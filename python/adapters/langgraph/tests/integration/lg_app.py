"""The conformance suite's app factory for LangGraph: a LangChain `create_agent` agent.

The chat model answers what the data file's `ScriptedApp` decides from the
messages alone (never from a call counter), so a restarted Worker answers the
same way; its tools are `ScriptedApp.run_tool`. The handoff case runs on a graph
of its own (`build_handoffs_flow`): a LangGraph handoff is a node's
`Command(goto=...)`, not something `create_agent` does. Run as a script it serves
the Flow (`dex_agents_testing.conformance.serve`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents.mcp import McpToolSource
from dex_agents_contracts import ToolEffect
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    DexToolContext,
    LangGraphRunner,
    langchain_mcp_tools,
)
from dex_agents_langgraph.testing import RespondingChatModel, trailing_tool_messages
from dex_agents_testing.conformance import (
    McpSourceFactory,
    ScriptedApp,
    Traits,
    retry_reason,
    serve,
    session_options,
)
from dex_agents_testing.run_state_fixtures import ModelScript
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command
from pydantic import BaseModel, field_validator

CONFORMANCE = Traits(
    messages_after_booking=6,
    factories={"handoff_to_billing": "build_handoffs_flow"},
    nonconforming={
        "plan_mode": (
            "not implemented yet: LangGraphRunner neither hides the agent's own tools in a "
            "planning turn nor shows the plan note (dex_agents._runner.plan_mode has both)"
        ),
    },
)


class City(BaseModel):
    name: str
    country: str

    @field_validator("name")
    @classmethod
    def capitalized(cls, value: str) -> str:
        reason = retry_reason({"name": value})
        if reason is not None:
            raise ValueError(reason)
        return value


def _call(tool_name: str, call_id: str, /, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": tool_name, "args": args}


Reply = Callable[[list[BaseMessage]], Awaitable[AIMessage]]


def scripted_reply(app: ScriptedApp) -> Reply:
    """The model: answers from the conversation, the last user prompt and the trailing
    tool results."""

    async def reply(messages: list[BaseMessage]) -> AIMessage:
        prompts = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
        results = trailing_tool_messages(messages)
        answer = await app.answer(
            prompts=prompts,
            results=[(str(r.tool_call_id), str(r.name), str(r.text)) for r in results],
            messages=len(messages),
            retried=bool(results),
        )
        usage = {
            "input_tokens": len(messages),
            "output_tokens": 1,
            "total_tokens": len(messages) + 1,
        }
        if answer.output is not None:
            # The id differs per attempt: the retry answers the first call's error.
            output_id = f"o{len(prompts)}{len(results)}"
            calls = [_call("City", output_id, **answer.output)]
        else:
            calls = [_call(c.name, c.id, **c.arguments) for c in answer.calls]
        if answer.reasoning:
            blocks: list[str | dict[str, Any]] = [
                {"type": "reasoning", "reasoning": answer.reasoning},
                {"type": "text", "text": answer.text or ""},
            ]
            return AIMessage(content=blocks, tool_calls=calls, usage_metadata=usage)
        return AIMessage(content=answer.text or "", tool_calls=calls, usage_metadata=usage)

    return reply


def build_flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
) -> AgentSessionFlow:
    """The app's agent; a case's flow adds the session's built-in tools or an MCP source."""
    app = ScriptedApp(log_path)
    sources = [mcp(app.mcp_log)] if mcp else []
    return AgentSessionFlow(
        _runner(scripted_reply(app), app, mcp_sources=sources),
        flow_type=flow_type,
        options=session_options(interrupt_deadline_seconds, built_in_tools=built_in_tools),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[LangGraphRunner]:
    """The same agent with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    async def reply(messages: list[BaseMessage]) -> AIMessage:
        results = trailing_tool_messages(messages)
        answer = script.next_reply(results=[(str(r.name), str(r.text)) for r in results])
        if "text" in answer:
            return AIMessage(content=answer["text"])
        calls = [_call(c["name"], c["id"], **c["arguments"]) for c in answer["tool_calls"]]
        return AIMessage(content="", tool_calls=calls)

    yield _runner(reply, ScriptedApp(log_path))


def _runner(
    reply: Reply, app: ScriptedApp, *, mcp_sources: Sequence[McpToolSource] = ()
) -> LangGraphRunner:
    def key(config: RunnableConfig) -> str | None:
        context = DexToolContext.from_config(config)
        return context.idempotency_key if context else None

    @tool
    async def get_weather(city: str, config: RunnableConfig) -> str:
        """The weather in a city."""
        return await app.run_tool("get_weather", {"city": city}, key(config))

    @tool
    async def book_trip(city: str, config: RunnableConfig) -> str:
        """Books a trip to a city."""
        return await app.run_tool("book_trip", {"city": city}, key(config))

    @tool
    async def charge(usd: int, config: RunnableConfig) -> str:
        """Charges the card."""
        return await app.run_tool("charge", {"usd": usd}, key(config))

    @tool
    async def charge_now(usd: int, config: RunnableConfig) -> str:
        """Charges the card at once."""
        return await app.run_tool("charge_now", {"usd": usd}, key(config))

    listed = [tool for source in mcp_sources for tool in asyncio.run(langchain_mcp_tools(source))]
    agent = create_agent(
        RespondingChatModel(respond=reply),
        [get_weather, book_trip, charge, charge_now, *listed],
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
        response_format=City,
    )
    return LangGraphRunner(agent, tool_policies=app.policies(), mcp_sources=mcp_sources)


def build_handoffs_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """A `triage` node that hands the turn to the `billing` agent (`Command(goto=...)`)."""
    app = ScriptedApp(log_path)

    @tool
    async def refund(order: str, config: RunnableConfig) -> str:
        """Refunds an order."""
        context = DexToolContext.from_config(config)
        app.log_tool("refund", context.idempotency_key if context else None)
        return f"refunded {order}"

    async def billing_reply(messages: list[BaseMessage]) -> AIMessage:
        prompts = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
        results = trailing_tool_messages(messages)
        shown = [(str(r.tool_call_id), str(r.name), str(r.text)) for r in results]
        app.log_model(prompts=prompts, results=shown, messages=len(messages), agent="billing")
        if results:
            return AIMessage(content=f"Billing: {results[0].text}")
        return AIMessage(content="", tool_calls=[_call("refund", f"f{len(prompts)}", order="A-1")])

    billing = create_agent(
        RespondingChatModel(respond=billing_reply), [refund], middleware=[DexStepMiddleware()]
    )

    def triage(state: MessagesState) -> Command[Literal["billing"]]:
        return Command(goto="billing")

    builder = StateGraph(MessagesState)
    builder.add_node("triage", triage)
    builder.add_node("billing", billing)
    builder.add_edge(START, "triage")
    graph = builder.compile(checkpointer=DexCheckpointSaver())
    policies = {**app.policies(), "refund": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)}
    return AgentSessionFlow(
        LangGraphRunner(graph, tools=[refund], tool_policies=policies),
        flow_type=flow_type,
        options=session_options(interrupt_deadline_seconds),
    )


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
