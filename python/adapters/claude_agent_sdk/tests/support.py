"""The unit tests' agent: a scripted fake Messages API and two SDK tools, one read, one write."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from claude_agent_sdk import ToolAnnotations, tool
from dex_agents import ToolPolicy
from dex_agents.offline import FakeSession
from dex_agents_claude_agent_sdk import ClaudeAgentRunner, current_tool_execution
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)

CONTINUE = "Continue from where you left off."


def prompt_of(request: MessagesRequest) -> str:
    said = [t for t in request.user_texts() if t != CONTINUE]
    return said[-1] if said else ""


def turn_results(request: MessagesRequest) -> list[tuple[str, str]]:
    """`(tool name, result)` of the current turn: the results after the last prompt."""
    names = {i: n.rsplit("__", 1)[-1] for i, n, _ in request.tool_uses()}
    results: list[tuple[str, str]] = []
    for message in request.messages:
        if message.get("role") != "user":
            continue
        one = MessagesRequest({"messages": [message]})
        if [t for t in one.user_texts() if t != CONTINUE]:
            results = []
        results.extend((names.get(i, i), text) for i, text, _ in one.tool_results())
    return results


def results_text(request: MessagesRequest) -> str:
    return "Results: " + "; ".join(f"{n}={t}" for n, t in turn_results(request))


def default_script(request: MessagesRequest) -> ScriptedReply:
    prompt = prompt_of(request)
    if request.owes_answer() and not prompt.startswith("loop"):
        return text_reply(results_text(request))
    if prompt.startswith("weather"):
        return tool_use_reply(("w1", "mcp__app__get_weather", {"city": "Paris"}))
    if prompt.startswith("book"):
        return tool_use_reply(
            ("r1", "mcp__app__get_weather", {"city": "Rome"}),
            ("k1", "mcp__app__book_trip", {"city": "Rome"}),
        )
    if prompt.startswith("two bookings"):
        return tool_use_reply(
            ("k1", "mcp__app__book_trip", {"city": "Rome"}),
            ("w1", "mcp__app__get_weather", {"city": "Lima"}),
            ("k2", "mcp__app__book_trip", {"city": "Oslo"}),
        )
    if prompt.startswith("bash"):
        return tool_use_reply(("b1", "Bash", {"command": "echo hi"}))
    if prompt.startswith("loop"):
        n = len(request.tool_uses()) + 1
        return tool_use_reply((f"l{n}", "mcp__app__get_weather", {"city": f"C{n}"}))
    return text_reply(f"I have seen {len(request.messages)} messages.")


@dataclass
class Agent:
    server: FakeMessagesServer
    runs: list[tuple[str, Any]] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)

    def runner(self, **kwargs: Any) -> ClaudeAgentRunner:
        runs, keys = self.runs, self.keys

        @tool(
            "get_weather",
            "The weather in a city.",
            {"city": str},
            annotations=ToolAnnotations(readOnlyHint=True),
        )
        async def get_weather(args: dict[str, Any]) -> dict[str, Any]:
            runs.append(("get_weather", args))
            return {"content": [{"type": "text", "text": f"sunny in {args['city']}"}]}

        @tool("book_trip", "Books a trip.", {"city": str})
        async def book_trip(args: dict[str, Any]) -> dict[str, Any]:
            runs.append(("book_trip", args))
            call = current_tool_execution()
            keys.append(call.idempotency_key if call else None)
            return {"content": [{"type": "text", "text": f"booked {args['city']}"}]}

        options = offline_options(self.server.base_url, **kwargs.pop("options", {}))
        policies = kwargs.pop("tool_policies", {"book_trip": ToolPolicy(effect=_write())})
        return ClaudeAgentRunner(
            options, tools={"app": [get_weather, book_trip]}, tool_policies=policies, **kwargs
        )

    def session(self, **kwargs: Any) -> FakeSession[ClaudeAgentRunner]:
        return FakeSession(self.runner(**kwargs))


def _write() -> Any:
    from dex_agents_contracts import ToolEffect

    return ToolEffect.NON_IDEMPOTENT_WRITE


@contextmanager
def fake_agent(
    script: Callable[[MessagesRequest], ScriptedReply] = default_script,
) -> Iterator[Agent]:
    with FakeMessagesServer(script) as server:
        yield Agent(server)
