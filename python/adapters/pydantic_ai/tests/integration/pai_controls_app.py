"""The session-control tests' application: built-ins, steering and cancellation.

A Pydantic AI agent on a session with every built-in enabled. Run like
`pai_app.py` (`--server ADDR --flow-type T --log PATH`; prints `ready`). The
FunctionModel decides from the message history alone, by the last user prompt:

- `ask ...` calls ask_user, `wait ...` calls durable_wait for an hour, and
  `plan ...` calls write_todos; with the call's result in hand it answers
  `Results: <tool>=<result>`.
- `hold ...` waits for the gate file `PATH.hold-gate`, then asks for the READ
  tool `lookup`; a cancelled wait is logged as `model_cancelled`.
- anything else answers `Prompts: <every user prompt it saw, joined by |>`.

Every model call, tool run and cancelled model call is logged to PATH as JSON lines.
`--factory build_conflicting_flow` serves an agent whose own tool is named ask_user.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, run_worker
from dex_agents_pydantic_ai import PydanticAiRunner
from pydantic_ai import Agent, DeferredToolRequests
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

TODOS = [
    {"content": "pack", "status": "completed"},
    {"content": "travel", "status": "in_progress"},
]


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


def _call(prompt: str, n: int) -> ToolCallPart | None:
    if prompt.startswith("ask"):
        return ToolCallPart("ask_user", {"question": "Which city?"}, tool_call_id=f"q{n}")
    if prompt.startswith("wait"):
        arguments = {"seconds": 3600, "reason": "cool down"}
        return ToolCallPart("durable_wait", arguments, tool_call_id=f"t{n}")
    if prompt.startswith("plan"):
        return ToolCallPart("write_todos", {"todos": TODOS}, tool_call_id=f"p{n}")
    return None


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    del interrupt_deadline_seconds  # the common `build_flow` signature; not used here

    async def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts = _user_prompts(messages)
        prompt = prompts[-1] if prompts else ""
        last = messages[-1]
        parts = last.parts if isinstance(last, ModelRequest) else []
        results = [p for p in parts if isinstance(p, ToolReturnPart)]
        # Pydantic AI joins a stored tool result and a new user message into one
        # request; a user message there starts a new question.
        asked = any(isinstance(p, UserPromptPart) for p in parts)
        _log(
            log_path,
            {
                "kind": "model",
                "prompts": prompts,
                "tools": [t.name for t in info.function_tools],
                "results": {r.tool_call_id: r.model_response_str() for r in results},
            },
        )
        n = len(prompts)
        if results and not asked:
            text = "; ".join(f"{r.tool_name}={r.model_response_str()}" for r in results)
            return ModelResponse(parts=[TextPart(content=f"Results: {text}")])
        if prompt.startswith("hold"):
            try:
                await _gate(f"{log_path}.hold-gate")
            except asyncio.CancelledError:
                # cancel_turn cancels the Step's coroutine while Pydantic AI awaits this call.
                _log(log_path, {"kind": "model_cancelled", "prompts": prompts})
                raise
            return ModelResponse(parts=[ToolCallPart("lookup", {"key": "x"}, tool_call_id=f"l{n}")])
        call = _call(prompt, n)
        if call is not None:
            return ModelResponse(parts=[call])
        return ModelResponse(parts=[TextPart(content=f"Prompts: {'|'.join(prompts)}")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(metadata={"dex_effect": "read"})
    def lookup(key: str) -> str:
        _log(log_path, {"kind": "tool", "name": "lookup"})
        return f"value of {key}"

    return _flow(agent, flow_type)


def build_conflicting_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """An agent with a tool of its own named `ask_user`, which the session reserves."""
    del interrupt_deadline_seconds

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        _log(log_path, {"kind": "model", "prompts": _user_prompts(messages)})
        return ModelResponse(parts=[TextPart(content="never sent")])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(model), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain
    def ask_user(question: str) -> str:
        _log(log_path, {"kind": "tool", "name": "ask_user"})
        return "my own answer"

    return _flow(agent, flow_type)


def _flow(agent: Agent[None, str | DeferredToolRequests], flow_type: str) -> AgentSessionFlow:
    return AgentSessionFlow(
        PydanticAiRunner(agent),
        flow_type=flow_type,
        options=AgentSessionOptions(built_in_tools=("ask_user", "durable_wait", "write_todos")),
    )


FACTORIES = {"build_flow": build_flow, "build_conflicting_flow": build_conflicting_flow}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--flow-type", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--interrupt-deadline", type=float, default=None)
    parser.add_argument("--factory", choices=sorted(FACTORIES), default="build_flow")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    flow = FACTORIES[args.factory](args.flow_type, args.log)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
