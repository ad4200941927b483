"""The integration tests' application: a Google ADK agent on a real Worker process.

Run as `python adk_app.py --server ADDR --flow-type T --log PATH`; prints `ready`
once the Worker serves (the `WorkerApp` contract of dex_agents_testing). The
model is a `ScriptedLlm` answering from the request's contents alone (never from
a call counter), so a restarted Worker answers the same way; it logs every model
call and tool run to PATH as JSON lines. A model call or tool that a test kills
mid-call waits for a gate file (`PATH.model-gate`, `PATH.charge-gate`) that the
test creates once the Worker is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy, run_worker
from dex_agents_contracts import ToolEffect
from dex_agents_google_adk import AdkRunner, dex_run_info
from dex_agents_google_adk.testing import ScriptedLlm, call, function_results, prompts, text
from dex_agents_testing.run_state_fixtures import ModelScript
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

BLOCKED = "blocked by the before_tool_callback"


def _log(path: str, entry: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(entry) + "\n")


async def _gate(path: str) -> None:
    """Waits for a gate file; it polls, because the test creates the file from its own process."""
    gate = Path(path)
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110 - see the docstring
        await asyncio.sleep(0.05)


Respond = Callable[[LlmRequest], Awaitable[list[types.Part]]]


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    deadline = (
        timedelta(seconds=interrupt_deadline_seconds)
        if interrupt_deadline_seconds is not None
        else None
    )
    return AgentSessionFlow(
        _runner(_responder(log_path), log_path),
        flow_type=flow_type,
        options=AgentSessionOptions(interrupt_deadline=deadline),
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

    yield _runner(respond, log_path)


def _responder(log_path: str) -> Respond:
    async def respond(request: LlmRequest) -> list[types.Part]:
        said = prompts(request)
        prompt = said[-1] if said else ""
        results = function_results(request)
        tools = sorted(request.tools_dict)
        _log(
            log_path,
            {
                "kind": "model",
                "agent": "billing" if "refund" in tools else "assistant",
                "items": len(request.contents),
                "prompts": said,
                "tools": tools,
                "results": {call_id: output for call_id, _, output in results},
            },
        )
        n = len(said)
        if "refund" in tools:  # the billing agent, after the transfer
            refunds = [output for _, name, output in results if name == "refund"]
            if refunds:
                return [text(f"Billing: {refunds[0]}")]
            return [call("refund", {"order": "A-1"}, f"f{n}")]
        if prompt.startswith("refund") and not results:
            return [call("transfer_to_agent", {"agent_name": "billing"}, f"h{n}")]
        if results:
            if prompt.startswith("fail"):
                raise RuntimeError("model unavailable")
            if prompt.startswith("slow"):
                await _gate(f"{log_path}.model-gate")
            shown = "; ".join(f"{name}={output}" for _, name, output in results)
            return [text(f"Results: {shown}")]
        if prompt.startswith(("weather", "slow")):
            return [call("get_weather", {"city": "Paris"}, f"w{n}")]
        if prompt.startswith("parallel"):
            return [
                call("get_weather", {"city": "Oslo"}, f"a{n}"),
                call("get_weather", {"city": "Lima"}, f"b{n}"),
            ]
        if prompt.startswith("book"):
            return [
                call("get_weather", {"city": "Rome"}, f"r{n}"),
                call("book_trip", {"city": "Rome"}, f"k{n}"),
            ]
        if prompt.startswith("charge"):
            return [call("charge", {"usd": 5}, f"p{n}")]
        if prompt.startswith("fail"):
            return [call("charge_now", {"usd": 5}, f"f{n}")]
        if prompt.startswith("clean"):
            return [
                call("delete_files", {"path": "/"}, f"d{n}"),
                call("get_weather", {"city": "Paris"}, f"w{n}"),
            ]
        return [text(f"I have seen {len(request.contents)} messages.")]

    return respond


def _runner(respond: Respond, log_path: str) -> AdkRunner:
    def get_weather(city: str) -> str:
        """The weather in a city."""
        info = dex_run_info()
        _log(
            log_path, {"kind": "tool", "name": "get_weather", "key": info and info.idempotency_key}
        )
        return f"sunny in {city}"

    def book_trip(city: str) -> str:
        """Books a trip."""
        _log(log_path, {"kind": "tool", "name": "book_trip"})
        return f"booked {city}"

    async def charge(usd: int) -> str:
        """Charges the card."""
        info = dex_run_info()
        _log(log_path, {"kind": "tool", "name": "charge", "key": info and info.idempotency_key})
        await _gate(f"{log_path}.charge-gate")
        return f"charged {usd} USD"

    def charge_now(usd: int) -> str:
        """Charges the card at once."""
        _log(log_path, {"kind": "tool", "name": "charge_now"})
        return f"charged {usd} USD"

    def delete_files(path: str) -> str:
        """Deletes files."""
        _log(log_path, {"kind": "tool", "name": "delete_files"})
        return f"deleted {path}"

    def refund(order: str) -> str:
        """Refunds an order."""
        _log(log_path, {"kind": "tool", "name": "refund"})
        return f"refunded {order}"

    def guard(
        tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """Answers delete_files itself, so the tool never runs (ADK's short-circuit)."""
        _log(log_path, {"kind": "callback", "name": tool.name})
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
    )
    no_approval_write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return AdkRunner(
        agent,
        tool_policies={
            "get_weather": ToolPolicy(effect=ToolEffect.READ),
            "refund": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
            "book_trip": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
            "charge": no_approval_write,
            "charge_now": no_approval_write,
            "delete_files": no_approval_write,
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
    logging.getLogger("google_adk").setLevel(logging.ERROR)
    flow = build_flow(args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
