"""The conformance suite's app factory for Google ADK (a `WorkerApp` script).

The model is a `ScriptedLlm` answering what the data file's `ScriptedApp`
decides from the request's contents alone (never from a call counter), so a
restarted Worker answers the same way; the tools are `ScriptedApp.run_tool`.
This adapter's own cases (a transfer to a sub-agent, a before_tool_callback)
share the agents. Run as a script it serves the Flow
(`dex_agents_testing.conformance.serve`).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents.mcp import McpToolSource
from dex_agents_contracts import ToolEffect
from dex_agents_google_adk import AdkRunner, dex_run_info
from dex_agents_google_adk.testing import ScriptedLlm, call, function_results, prompts, text
from dex_agents_testing.conformance import (
    McpSourceFactory,
    ScriptedApp,
    Traits,
    serve,
    session_options,
)
from dex_agents_testing.run_state_fixtures import ModelScript
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import BaseModel

BLOCKED = "blocked by the before_tool_callback"

CONFORMANCE = Traits(
    # ADK sends the first turn as four contents (the response's two calls in one,
    # their two results in one), then the new user message.
    messages_after_booking=5,
    # The answer is the model's JSON text, which ADK validates against `City`.
    structured_output_as_text=True,
    factories={"structured_output": "build_structured_flow"},
    nonconforming={
        "plan_mode": (
            "not implemented yet: AdkRunner neither hides the agent's own tools in a "
            "planning turn nor shows the plan note (dex_agents._runner.plan_mode has both)"
        ),
        "structured_output_with_validator_retry": (
            "ADK validates an LlmAgent's output_schema once and raises on a mismatch, "
            "with no retry to the model (google/adk/agents/llm_agent.py, "
            "__maybe_save_output_to_state -> validate_schema)"
        ),
    },
)


Respond = Callable[[LlmRequest], Awaitable[list[types.Part]]]


class City(BaseModel):
    name: str
    country: str


def build_structured_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """The same agents, the root answering a `City` (its `output_schema`)."""
    return build_flow(flow_type, log_path, interrupt_deadline_seconds, output_schema=City)


def build_flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
    output_schema: type[BaseModel] | None = None,
) -> AgentSessionFlow:
    """The app's agents; a case's flow adds the session's built-in tools or an MCP
    source (the root agent's); `output_schema` is the root's (`build_structured_flow`)."""
    app = ScriptedApp(log_path)
    sources = [mcp(app.mcp_log)] if mcp else []
    return AgentSessionFlow(
        _runner(_responder(app), app, mcp_sources=sources, output_schema=output_schema),
        flow_type=flow_type,
        options=session_options(interrupt_deadline_seconds, built_in_tools=built_in_tools),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[AdkRunner]:
    """The same agents with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    async def respond(request: LlmRequest) -> list[types.Part]:
        reply = script.next_reply(
            results=[(name, output) for _, name, output in function_results(request)],
            tools=list(request.tools_dict),
        )
        if "text" in reply:
            return [text(reply["text"])]
        return [call(c["name"], c["arguments"], c["id"]) for c in reply["tool_calls"]]

    yield _runner(respond, ScriptedApp(log_path))


def _responder(app: ScriptedApp) -> Respond:
    async def respond(request: LlmRequest) -> list[types.Part]:
        said = prompts(request)
        prompt = said[-1] if said else ""
        results = function_results(request)
        tools = sorted(request.tools_dict)
        agent = "billing" if "refund" in tools else "assistant"
        n = len(said)
        # This adapter's own cases (test_adapter_cases.py) first: the transfer, the callback.
        if "refund" in tools or (prompt.startswith(("refund", "clean")) and not results):
            entry = {"agent": agent, "items": len(request.contents), "tools": tools}
            app.log_model(prompts=said, results=results, messages=len(request.contents), **entry)
            if "refund" in tools:  # the billing agent, after the transfer
                refunds = [output for _, name, output in results if name == "refund"]
                if refunds:
                    return [text(f"Billing: {refunds[0]}")]
                return [call("refund", {"order": "A-1"}, f"f{n}")]
            if prompt.startswith("refund"):
                return [call("transfer_to_agent", {"agent_name": "billing"}, f"h{n}")]
            return [
                call("delete_files", {"path": "/"}, f"d{n}"),
                call("get_weather", {"city": "Paris"}, f"w{n}"),
            ]
        answer = await app.answer(
            prompts=said,
            results=results,
            messages=len(request.contents),
            log={"agent": agent, "items": len(request.contents), "tools": tools},
        )
        if answer.output is not None:
            return [text(json.dumps(answer.output))]
        if answer.text is not None:
            thought = [types.Part(text=answer.reasoning, thought=True)] if answer.reasoning else []
            return [*thought, text(answer.text)]
        return [call(c.name, dict(c.arguments), c.id) for c in answer.calls]

    return respond


def _runner(
    respond: Respond,
    app: ScriptedApp,
    *,
    mcp_sources: Sequence[McpToolSource] = (),
    output_schema: type[BaseModel] | None = None,
) -> AdkRunner:
    def key() -> str | None:
        info = dex_run_info()
        return info.idempotency_key if info is not None else None

    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return await app.run_tool("get_weather", {"city": city}, key())

    async def book_trip(city: str) -> str:
        """Books a trip."""
        return await app.run_tool("book_trip", {"city": city}, key())

    async def charge(usd: int) -> str:
        """Charges the card."""
        return await app.run_tool("charge", {"usd": usd}, key())

    async def charge_now(usd: int) -> str:
        """Charges the card at once."""
        return await app.run_tool("charge_now", {"usd": usd}, key())

    def delete_files(path: str) -> str:
        """Deletes files."""
        app.log_tool("delete_files", key())
        return f"deleted {path}"

    def refund(order: str) -> str:
        """Refunds an order."""
        app.log_tool("refund", key())
        return f"refunded {order}"

    def guard(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Answers delete_files itself, so the tool never runs (ADK's short-circuit)."""
        app.log_callback(tool.name)
        return {"result": BLOCKED} if tool.name == "delete_files" else None

    billing = LlmAgent(
        name="billing",
        description="Refunds orders.",
        model=ScriptedLlm(respond),
        tools=[refund],
    )
    agent = LlmAgent(
        name="assistant",
        model=ScriptedLlm(respond),
        tools=[get_weather, book_trip, charge, charge_now, delete_files],
        sub_agents=[billing],
        before_tool_callback=guard,
        output_schema=output_schema,
        output_key="answer" if output_schema else None,
    )
    policies = {
        **app.policies(),
        "refund": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
        "delete_files": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False),
    }
    return AdkRunner(agent, tool_policies=policies, mcp_sources=mcp_sources)


if __name__ == "__main__":
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    sys.exit(serve(sys.modules[__name__]))
