"""The conformance suite's app factory for the Claude Agent SDK (a `WorkerApp` script).

The model is the bundled CLI calling a fake Messages API that this process
serves on loopback; it answers what the data file's `ScriptedApp` decides from
the request's contents alone (never from a call counter), so a restarted Worker
answers the same way. The tools are `ScriptedApp.run_tool`, served under the SDK
server `app` (the model sees `mcp__app__<name>`). Run as a script it serves the
Flow (`dex_agents_testing.conformance.serve`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from claude_agent_sdk import SdkMcpTool, ToolAnnotations, tool
from dex_agents import AgentSessionFlow
from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS
from dex_agents.mcp import McpToolSource
from dex_agents_claude_agent_sdk import ClaudeAgentRunner, current_tool_execution
from dex_agents_claude_agent_sdk._runner import STRUCTURED_OUTPUT_TOOL
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_testing.conformance import (
    McpSourceFactory,
    ScriptedApp,
    Traits,
    serve,
    session_options,
)
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    ScriptedText,
    ScriptedThinking,
    text_reply,
    tool_use_reply,
)
from dex_agents_testing.run_state_fixtures import ModelScript
from pydantic import BaseModel

CONTINUE = "Continue from where you left off."
PREFIX = "mcp__app__"
MCP_PREFIX = "mcp__dex_mcp__"
BUILT_IN_PREFIX = "mcp__dex_session__"

CONFORMANCE = Traits(
    # The Messages API requests carry the CLI's transcript, which has more messages.
    messages_after_weather=7,
    messages_after_booking=8,
    harness=True,
    tool_prefix=PREFIX,
    factories={"structured_output": "build_structured_flow"},
    nonconforming={
        "plan_mode": (
            "not implemented yet: ClaudeAgentRunner neither hides the agent's own tools in a "
            "planning turn nor shows the plan note (dex_agents._runner.plan_mode has both)"
        ),
        "handoff_to_billing": (
            "the CLI runs a sub-agent (ClaudeAgentOptions.agents, AgentDefinition in "
            "claude_agent_sdk/types.py) as its own Task tool inside the turn; the turn "
            "is never handed to another agent"
        ),
        "structured_output_with_validator_retry": (
            "an adapter gap: the CLI checks the StructuredOutput tool's input against "
            "ClaudeAgentOptions.output_format's JSON schema only (claude_agent_sdk/_internal/"
            "transport/subprocess_cli.py passes it as --json-schema) and asks again only on "
            "a schema mismatch; an application validator (City's capitalization) would need "
            "a PostToolUse hook on StructuredOutput, which ClaudeAgentRunner does not offer"
        ),
    },
)


def _prompts(request: MessagesRequest) -> list[str]:
    return [t for t in request.user_texts() if t != CONTINUE]


def _turn_results(request: MessagesRequest) -> list[tuple[str, str, str]]:
    """`(id, tool, output)` of the current turn: the results after the last prompt."""
    names = {i: n.rsplit("__", 1)[-1] for i, n, _ in request.tool_uses()}
    results: list[tuple[str, str, str]] = []
    for message in request.messages:
        if message.get("role") != "user":
            continue
        one = MessagesRequest({"messages": [message]})
        if _prompts(one):
            results = []
        results.extend((i, names.get(i, i), text) for i, text, _ in one.tool_results())
    return results


def scripted_model(app: ScriptedApp) -> Callable[[MessagesRequest], ScriptedReply]:
    def respond(request: MessagesRequest) -> ScriptedReply:
        results = _turn_results(request) if request.owes_answer() else []
        try:
            answer = asyncio.run(
                app.answer(
                    prompts=_prompts(request),
                    results=results,
                    messages=len(request.messages),
                    log={"items": len(request.messages)},
                )
            )
        except RuntimeError as error:  # the data file's failing model
            return ScriptedReply(error_status=500, error_message=str(error), error_type="api_error")
        if answer.output is not None:  # the CLI's tool for the answer (output_format)
            return tool_use_reply(("o", STRUCTURED_OUTPUT_TOOL, dict(answer.output)))
        if answer.text is not None:
            thought = [ScriptedThinking(answer.reasoning)] if answer.reasoning else []
            return ScriptedReply(blocks=[*thought, ScriptedText(answer.text)])
        return tool_use_reply(*((c.id, _cli_name(c.name), dict(c.arguments)) for c in answer.calls))

    return respond


def _cli_name(name: str) -> str:
    """The CLI's name for a tool: the app's under `app`, a source's (`notes__...`) under
    the runner's `dex_mcp` server, a built-in's under its `dex_session` server."""
    if name in BUILT_IN_TOOL_DEFINITIONS:
        return f"{BUILT_IN_PREFIX}{name}"
    return f"{MCP_PREFIX}{name}" if "__" in name else f"{PREFIX}{name}"


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def app_tools(app: ScriptedApp) -> list[SdkMcpTool[Any]]:
    async def run(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
        call = current_tool_execution()
        key = call.idempotency_key if call else None
        return _text(await app.run_tool(name, args, key))

    @tool(
        "get_weather",
        "The weather in a city.",
        {"city": str},
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    async def get_weather(args: Mapping[str, Any]) -> dict[str, Any]:
        return await run("get_weather", args)

    @tool("book_trip", "Books a trip.", {"city": str})
    async def book_trip(args: Mapping[str, Any]) -> dict[str, Any]:
        return await run("book_trip", args)

    @tool("charge", "Charges the card.", {"usd": int})
    async def charge(args: Mapping[str, Any]) -> dict[str, Any]:
        return await run("charge", args)

    @tool("charge_now", "Charges the card at once.", {"usd": int})
    async def charge_now(args: Mapping[str, Any]) -> dict[str, Any]:
        return await run("charge_now", args)

    return [get_weather, book_trip, charge, charge_now]


class City(BaseModel):
    name: str
    country: str


def build_structured_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """The same agent answering a `City` (`ClaudeAgentOptions.output_format`)."""
    output_format = {"type": "json_schema", "schema": City.model_json_schema()}
    return build_flow(flow_type, log_path, interrupt_deadline_seconds, output_format=output_format)


def build_flow(
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
    output_format: dict[str, Any] | None = None,
) -> AgentSessionFlow:
    """The app's agent; a case's flow adds the session's built-in tools or an MCP source."""
    app = ScriptedApp(log_path)
    server = FakeMessagesServer(scripted_model(app)).start()
    sources = [mcp(app.mcp_log)] if mcp else []
    return AgentSessionFlow(
        _runner(server, app, mcp_sources=sources, output_format=output_format),
        flow_type=flow_type,
        options=session_options(interrupt_deadline_seconds, built_in_tools=built_in_tools),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[ClaudeAgentRunner]:
    """The same agent with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    def respond(request: MessagesRequest) -> ScriptedReply:
        results = _turn_results(request) if request.owes_answer() else []
        reply = script.next_reply(
            results=[(name, output) for _, name, output in results],
            tools=[n.rsplit("__", 1)[-1] for n in request.tool_names if n.startswith("mcp__")],
        )
        if "text" in reply:
            return text_reply(reply["text"])
        return tool_use_reply(*((c["id"], c["name"], c["arguments"]) for c in reply["tool_calls"]))

    with FakeMessagesServer(respond) as server:
        yield _runner(server, ScriptedApp(log_path))


def _runner(
    server: FakeMessagesServer,
    app: ScriptedApp,
    *,
    mcp_sources: Sequence[McpToolSource] = (),
    output_format: dict[str, Any] | None = None,
) -> ClaudeAgentRunner:
    return ClaudeAgentRunner(
        offline_options(server.base_url, output_format=output_format),
        tools={"app": app_tools(app)},
        mcp_sources=mcp_sources,
        # The CLI marks get_weather read-only itself (its readOnlyHint annotation).
        tool_policies={n: p for n, p in app.policies().items() if n != "get_weather"},
    )


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
