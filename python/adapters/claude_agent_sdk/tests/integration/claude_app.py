"""The integration tests' application: a Claude Agent SDK agent on a real Worker process.

Run as `python claude_app.py --server ADDR --flow-type T --log PATH`; prints
`ready` once the Worker serves (the `WorkerApp` contract of dex_agents_testing).
The model is the bundled CLI calling a scripted fake Messages API that this
process serves on loopback; the script answers from the request's contents alone
(never from a call counter), so a restarted Worker answers the same way. It logs
every model call and tool run to PATH as JSON lines. A model call or tool that a
test kills mid-call waits for a gate file (`PATH.model-gate`, `PATH.charge-gate`)
that the test creates once the Worker is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from claude_agent_sdk import SdkMcpTool, ToolAnnotations, tool
from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy, run_worker
from dex_agents_claude_agent_sdk import ClaudeAgentRunner, current_tool_execution
from dex_agents_claude_agent_sdk.testing import offline_options
from dex_agents_contracts import ToolEffect
from dex_agents_testing.fake_anthropic import (
    FakeMessagesServer,
    MessagesRequest,
    ScriptedReply,
    text_reply,
    tool_use_reply,
)
from dex_agents_testing.run_state_fixtures import ModelScript

CONTINUE = "Continue from where you left off."


def _log(path: str, entry: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(entry) + "\n")


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


def _wait_for(gate: Path) -> None:
    """Waits for a gate file the test creates from its own process (hence the polling)."""
    while not gate.exists():
        time.sleep(0.05)


def scripted_model(log_path: str) -> Callable[[MessagesRequest], ScriptedReply]:
    def respond(request: MessagesRequest) -> ScriptedReply:
        said = _prompts(request)
        prompt = said[-1] if said else ""
        results = _turn_results(request) if request.owes_answer() else []
        _log(
            log_path,
            {
                "kind": "model",
                "items": len(request.messages),
                "prompts": said,
                "results": {call_id: output for call_id, _, output in results},
            },
        )
        n = len(said)
        if results:
            if prompt.startswith("fail"):
                return ScriptedReply(
                    error_status=500, error_message="model unavailable", error_type="api_error"
                )
            if prompt.startswith("slow"):
                _wait_for(Path(f"{log_path}.model-gate"))
            shown = "; ".join(f"{name}={output}" for _, name, output in results)
            return text_reply(f"Results: {shown}")
        if prompt.startswith(("weather", "slow")):
            return tool_use_reply((f"w{n}", "mcp__app__get_weather", {"city": "Paris"}))
        if prompt.startswith("parallel"):
            return tool_use_reply(
                (f"a{n}", "mcp__app__get_weather", {"city": "Oslo"}),
                (f"b{n}", "mcp__app__get_weather", {"city": "Lima"}),
            )
        if prompt.startswith("book"):
            return tool_use_reply(
                (f"r{n}", "mcp__app__get_weather", {"city": "Rome"}),
                (f"k{n}", "mcp__app__book_trip", {"city": "Rome"}),
            )
        if prompt.startswith("two bookings"):
            return tool_use_reply(
                (f"k{n}", "mcp__app__book_trip", {"city": "Rome"}),
                (f"m{n}", "mcp__app__book_trip", {"city": "Oslo"}),
            )
        if prompt.startswith("charge"):
            return tool_use_reply((f"p{n}", "mcp__app__charge", {"usd": 5}))
        if prompt.startswith("fail"):
            return tool_use_reply((f"f{n}", "mcp__app__charge_now", {"usd": 5}))
        return text_reply(f"I have seen {len(request.messages)} messages.")

    return respond


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def app_tools(log_path: str) -> list[SdkMcpTool[Any]]:
    def logged(name: str) -> None:
        call = current_tool_execution()
        _log(
            log_path,
            {"kind": "tool", "name": name, "key": call.idempotency_key if call else None},
        )

    @tool(
        "get_weather",
        "The weather in a city.",
        {"city": str},
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    async def get_weather(args: Mapping[str, Any]) -> dict[str, Any]:
        logged("get_weather")
        return _text(f"sunny in {args['city']}")

    @tool("book_trip", "Books a trip.", {"city": str})
    async def book_trip(args: Mapping[str, Any]) -> dict[str, Any]:
        logged("book_trip")
        return _text(f"booked {args['city']}")

    @tool("charge", "Charges the card.", {"usd": int})
    async def charge(args: Mapping[str, Any]) -> dict[str, Any]:
        logged("charge")
        await asyncio.to_thread(_wait_for, Path(f"{log_path}.charge-gate"))
        return _text(f"charged {args['usd']} USD")

    @tool("charge_now", "Charges the card at once.", {"usd": int})
    async def charge_now(args: Mapping[str, Any]) -> dict[str, Any]:
        logged("charge_now")
        return _text(f"charged {args['usd']} USD")

    return [get_weather, book_trip, charge, charge_now]


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    server = FakeMessagesServer(scripted_model(log_path)).start()
    deadline = (
        timedelta(seconds=interrupt_deadline_seconds)
        if interrupt_deadline_seconds is not None
        else None
    )
    return AgentSessionFlow(
        _runner(server, log_path),
        flow_type=flow_type,
        options=AgentSessionOptions(interrupt_deadline=deadline),
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
        yield _runner(server, log_path)


def _runner(server: FakeMessagesServer, log_path: str) -> ClaudeAgentRunner:
    no_approval_write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return ClaudeAgentRunner(
        offline_options(server.base_url),
        tools={"app": app_tools(log_path)},
        tool_policies={
            "book_trip": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
            "charge": no_approval_write,
            "charge_now": no_approval_write,
        },
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flow = build_flow(args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
