"""The integration tests' application: a Pydantic AI agent on a real Worker process.

Run as `python pai_app.py --server ADDR --flow-type T --log PATH`; prints `ready`
once the Worker serves. The FunctionModel decides from the message history alone
(never from a call counter), so a restarted Worker answers the same way, and it
logs every model call and tool run to PATH as JSON lines. A model call or tool
that a test kills mid-call waits for a gate file (`PATH.model-gate`,
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
from dex_agents_pydantic_ai import PydanticAiRunner, dex_run_info
from dex_agents_testing.run_state_fixtures import ModelScript
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, ModelRetry, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


class City(BaseModel):
    name: str
    country: str


def _log(path: str, entry: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(entry) + "\n")


def _user_prompts(messages: list[ModelMessage]) -> list[str]:
    return [
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    ]


async def _gate(path: str) -> None:
    """Waits for a gate file; it polls, because the test creates the file from its own process."""
    gate = Path(path)
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110 - see the docstring
        await asyncio.sleep(0.05)


ModelFunction = Callable[[list[ModelMessage], AgentInfo], Awaitable[ModelResponse]]


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    deadline = (
        timedelta(seconds=interrupt_deadline_seconds)
        if interrupt_deadline_seconds is not None
        else None
    )
    return AgentSessionFlow(
        _runner(_model(log_path), log_path),
        flow_type=flow_type,
        options=AgentSessionOptions(interrupt_deadline=deadline),
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
        if "text" in reply:
            return ModelResponse(parts=[TextPart(content=reply["text"])])
        return ModelResponse(
            parts=[
                ToolCallPart(c["name"], c["arguments"], tool_call_id=c["id"])
                for c in reply["tool_calls"]
            ]
        )

    yield _runner(model, log_path)


def _model(log_path: str) -> ModelFunction:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts = _user_prompts(messages)
        prompt = prompts[-1] if prompts else ""
        results = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        _log(
            log_path,
            {
                "kind": "model",
                "messages": len(messages),
                "prompts": prompts,
                "results": {r.tool_call_id: r.model_response_str() for r in results},
            },
        )
        n = len(prompts)
        if prompt.startswith("city"):
            # Structured output: lowercase first, which the output validator sends back.
            retried = any(r.outcome == "retried" for r in results)
            name = "Paris" if retried else "paris"
            tool = info.output_tools[0].name
            return ModelResponse(
                parts=[ToolCallPart(tool, {"name": name, "country": "FR"}, tool_call_id=f"o{n}")]
            )
        if results:
            if prompt.startswith("fail"):
                raise RuntimeError("model unavailable")
            if prompt.startswith("slow"):
                await _gate(f"{log_path}.model-gate")
            text = "; ".join(f"{r.tool_name}={r.model_response_str()}" for r in results)
            return ModelResponse(parts=[TextPart(content=f"Results: {text}")])
        if prompt.startswith(("weather", "slow")):
            return ModelResponse(
                parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id=f"w{n}")]
            )
        if prompt.startswith("parallel"):
            return ModelResponse(
                parts=[
                    ToolCallPart("get_weather", {"city": "Oslo"}, tool_call_id=f"a{n}"),
                    ToolCallPart("get_weather", {"city": "Lima"}, tool_call_id=f"b{n}"),
                ]
            )
        if prompt.startswith("book"):
            return ModelResponse(
                parts=[
                    ToolCallPart("get_weather", {"city": "Rome"}, tool_call_id=f"r{n}"),
                    ToolCallPart("book_trip", {"city": "Rome"}, tool_call_id=f"k{n}"),
                ]
            )
        if prompt.startswith("charge"):
            return ModelResponse(parts=[ToolCallPart("charge", {"usd": 5}, tool_call_id=f"p{n}")])
        if prompt.startswith("fail"):
            return ModelResponse(
                parts=[ToolCallPart("charge_now", {"usd": 5}, tool_call_id=f"f{n}")]
            )
        return ModelResponse(parts=[TextPart(content=f"I have seen {len(messages)} messages.")])

    return model


def _runner(model: ModelFunction, log_path: str) -> PydanticAiRunner[None]:
    agent: Agent[None, str | City | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, City, DeferredToolRequests]
    )

    @agent.output_validator
    def capitalized(output: str | City | DeferredToolRequests) -> str | City | DeferredToolRequests:
        if isinstance(output, City) and output.name != output.name.capitalize():
            raise ModelRetry("Capitalize the city name.")
        return output

    @agent.tool
    def get_weather(ctx: RunContext[None], city: str) -> str:
        info = dex_run_info(ctx)
        _log(
            log_path,
            {"kind": "tool", "name": "get_weather", "key": info and info.idempotency_key},
        )
        return f"sunny in {city}"

    @agent.tool_plain(requires_approval=True)
    def book_trip(city: str) -> str:
        _log(log_path, {"kind": "tool", "name": "book_trip"})
        return f"booked {city}"

    @agent.tool
    async def charge(ctx: RunContext[None], usd: int) -> str:
        info = dex_run_info(ctx)
        _log(log_path, {"kind": "tool", "name": "charge", "key": info and info.idempotency_key})
        await _gate(f"{log_path}.charge-gate")
        return f"charged {usd} USD"

    @agent.tool_plain
    def charge_now(usd: int) -> str:
        _log(log_path, {"kind": "tool", "name": "charge_now"})
        return f"charged {usd} USD"

    no_approval_write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return PydanticAiRunner(
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
