"""The integration tests' application: a LangChain `create_agent` agent on a real Worker.

Run as `python lg_app.py --server ADDR --flow-type T --log PATH`; prints `ready`
once the Worker serves. The chat model decides from the messages alone (never
from a call counter), so a restarted Worker answers the same way, and it logs
every model call and tool run to PATH as JSON lines. A model call or tool that
a test kills mid-call waits for a gate file (`PATH.model-gate`,
`PATH.charge-gate`) that the test creates once the Worker is gone.
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
from dex_agents_langgraph import (
    DexCheckpointSaver,
    DexStepMiddleware,
    DexToolContext,
    LangGraphRunner,
)
from dex_agents_langgraph.testing import RespondingChatModel
from dex_agents_testing.run_state_fixtures import ModelScript
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from pydantic import BaseModel, field_validator


class City(BaseModel):
    name: str
    country: str

    @field_validator("name")
    @classmethod
    def capitalized(cls, value: str) -> str:
        if value != value.capitalize():
            raise ValueError("Capitalize the city name.")
        return value


def _log(path: str, entry: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(entry) + "\n")


async def _gate(path: str) -> None:
    """Waits for a gate file; it polls, because the test creates the file from its own process."""
    gate = Path(path)
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110 - see the docstring
        await asyncio.sleep(0.05)


def _call(tool_name: str, call_id: str, /, **args: Any) -> dict[str, Any]:
    return {"id": call_id, "name": tool_name, "args": args}


Reply = Callable[[list[BaseMessage]], Awaitable[AIMessage]]


def _trailing_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.insert(0, message)
    return results


def scripted_reply(log_path: str) -> Reply:
    """The model: answers from the conversation, the last user prompt and the trailing
    tool results."""

    async def reply(messages: list[BaseMessage]) -> AIMessage:
        prompts = [str(m.text) for m in messages if isinstance(m, HumanMessage)]
        prompt = prompts[-1] if prompts else ""
        results = _trailing_results(messages)
        _log(
            log_path,
            {
                "kind": "model",
                "messages": len(messages),
                "prompts": prompts,
                "results": {r.tool_call_id: str(r.text) for r in results},
            },
        )
        n = len(prompts)
        usage = {
            "input_tokens": len(messages),
            "output_tokens": 1,
            "total_tokens": len(messages) + 1,
        }
        if prompt.startswith("city"):
            retried = bool(results)
            name = "Paris" if retried else "paris"
            return AIMessage(
                content="",
                tool_calls=[_call("City", f"o{n}{len(results)}", name=name, country="FR")],
                usage_metadata=usage,
            )
        if results:
            if prompt.startswith("fail"):
                raise RuntimeError("model unavailable")
            if prompt.startswith("slow"):
                await _gate(f"{log_path}.model-gate")
            text = "; ".join(f"{r.name}={r.text}" for r in results)
            return AIMessage(content=f"Results: {text}", usage_metadata=usage)
        calls: list[dict[str, Any]] = []
        if prompt.startswith(("weather", "slow")):
            calls = [_call("get_weather", f"w{n}", city="Paris")]
        elif prompt.startswith("parallel"):
            calls = [
                _call("get_weather", f"a{n}", city="Oslo"),
                _call("get_weather", f"b{n}", city="Lima"),
            ]
        elif prompt.startswith("book"):
            calls = [
                _call("get_weather", f"r{n}", city="Rome"),
                _call("book_trip", f"k{n}", city="Rome"),
            ]
        elif prompt.startswith("charge"):
            calls = [_call("charge", f"p{n}", usd=5)]
        elif prompt.startswith("fail"):
            calls = [_call("charge_now", f"f{n}", usd=5)]
        if calls:
            return AIMessage(content="", tool_calls=calls, usage_metadata=usage)
        return AIMessage(content=f"I have seen {len(messages)} messages.", usage_metadata=usage)

    return reply


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    deadline = (
        timedelta(seconds=interrupt_deadline_seconds)
        if interrupt_deadline_seconds is not None
        else None
    )
    return AgentSessionFlow(
        _runner(scripted_reply(log_path), log_path),
        flow_type=flow_type,
        options=AgentSessionOptions(interrupt_deadline=deadline),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[LangGraphRunner]:
    """The same agent with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    async def reply(messages: list[BaseMessage]) -> AIMessage:
        results = _trailing_results(messages)
        answer = script.next_reply(results=[(str(r.name), str(r.text)) for r in results])
        if "text" in answer:
            return AIMessage(content=answer["text"])
        calls = [_call(c["name"], c["id"], **c["arguments"]) for c in answer["tool_calls"]]
        return AIMessage(content="", tool_calls=calls)

    yield _runner(reply, log_path)


def _runner(reply: Reply, log_path: str) -> LangGraphRunner:
    @tool
    def get_weather(city: str, config: RunnableConfig) -> str:
        """The weather in a city."""
        context = DexToolContext.from_config(config)
        key = context.idempotency_key if context else None
        _log(log_path, {"kind": "tool", "name": "get_weather", "key": key})
        return f"sunny in {city}"

    @tool
    def book_trip(city: str) -> str:
        """Books a trip to a city."""
        _log(log_path, {"kind": "tool", "name": "book_trip"})
        return f"booked {city}"

    @tool
    async def charge(usd: int, config: RunnableConfig) -> str:
        """Charges the card."""
        context = DexToolContext.from_config(config)
        key = context.idempotency_key if context else None
        _log(log_path, {"kind": "tool", "name": "charge", "key": key})
        await _gate(f"{log_path}.charge-gate")
        return f"charged {usd} USD"

    @tool
    def charge_now(usd: int) -> str:
        """Charges the card at once."""
        _log(log_path, {"kind": "tool", "name": "charge_now"})
        return f"charged {usd} USD"

    agent = create_agent(
        RespondingChatModel(respond=reply),
        [get_weather, book_trip, charge, charge_now],
        middleware=[DexStepMiddleware()],
        checkpointer=DexCheckpointSaver(),
        response_format=City,
    )
    no_approval_write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return LangGraphRunner(
        agent,
        tool_policies={
            "get_weather": ToolPolicy(effect=ToolEffect.READ),
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
