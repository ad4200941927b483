"""The integration tests' application: an OpenAI Agents SDK agent on a real Worker process.

Run as `python oai_app.py --server ADDR --flow-type T --log PATH`; prints `ready`
once the Worker serves (the `WorkerApp` contract of dex_agents_testing). The
model is the SDK's ScriptedModel answering through a responder that decides from
the call's input items alone (never from a call counter), so a restarted Worker
answers the same way; it logs every model call and tool run to PATH as JSON
lines. A model call or tool that a test kills mid-call waits for a gate file
(`PATH.model-gate`, `PATH.charge-gate`) that the test creates once the Worker
is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunContextWrapper,
    function_tool,
    input_guardrail,
    output_guardrail,
    set_tracing_disabled,
)
from agents.testing import ModelCall, assistant_message, function_call
from agents.testing.model import ModelResponder
from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy, run_worker
from dex_agents._runner.policies import BuiltInToolName
from dex_agents.runner import AgentTurnContext, AgentTurnOutcome, ToolCallsRequested
from dex_agents_contracts import (
    ToolEffect,
    decode_run_state_envelope,
    encode_run_state_envelope,
)
from dex_agents_openai_agents import OpenAiAgentsRunner, dex_run_info
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing.run_state_fixtures import ModelScript

set_tracing_disabled(True)


def _log(path: str, entry: dict[str, Any]) -> None:
    with Path(path).open("a") as f:
        f.write(json.dumps(entry) + "\n")


async def _gate(path: str) -> None:
    """Waits for a gate file; it polls, because the test creates the file from its own process."""
    gate = Path(path)
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110 - see the docstring
        await asyncio.sleep(0.05)


def _items(call: ModelCall) -> list[dict[str, Any]]:
    raw = call.input if isinstance(call.input, list) else [{"role": "user", "content": call.input}]
    return [i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in raw]


def _prompts(items: list[dict[str, Any]]) -> list[str]:
    return [str(i["content"]) for i in items if i.get("role") == "user"]


def _results(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(call ID, tool name, output) of the outputs after the last user message."""
    names: dict[str, str] = {}
    found: list[tuple[str, str, str]] = []
    for item in items:
        if item.get("role") == "user":
            found = []
        elif item.get("type") == "function_call":
            names[item["call_id"]] = item["name"]
        elif item.get("type") == "function_call_output":
            call_id = item["call_id"]
            found.append((call_id, names.get(call_id, "?"), str(item["output"])))
    return found


def build_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    return _flow(OpenAiAgentsRunner, flow_type, log_path, interrupt_deadline_seconds)


class StaleStateRunner(OpenAiAgentsRunner[None]):
    """Writes a RunState schema version the SDK does not support, as an older SDK might."""

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        outcome = await super().run_model_step(turn)
        if not isinstance(outcome, ToolCallsRequested):
            return outcome
        envelope = decode_run_state_envelope(outcome.framework_run_state)
        state = json.loads(envelope.payload)
        state["sdk_state"]["$schemaVersion"] = "0.1"
        stale = dataclasses.replace(envelope, payload=json.dumps(state))
        return dataclasses.replace(outcome, framework_run_state=encode_run_state_envelope(stale))


def build_stale_state_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    return _flow(StaleStateRunner, flow_type, log_path, interrupt_deadline_seconds)


BUILT_INS: tuple[BuiltInToolName, ...] = ("ask_user", "durable_wait", "write_todos")


def build_built_ins_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """The same agents in a session that enables every built-in tool."""
    return _flow(
        OpenAiAgentsRunner, flow_type, log_path, interrupt_deadline_seconds, built_ins=BUILT_INS
    )


def _flow(
    runner_type: type[OpenAiAgentsRunner[None]],
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None,
    *,
    built_ins: tuple[BuiltInToolName, ...] = (),
) -> AgentSessionFlow:
    deadline = (
        timedelta(seconds=interrupt_deadline_seconds)
        if interrupt_deadline_seconds is not None
        else None
    )
    return AgentSessionFlow(
        _runner(runner_type, _responder(log_path), log_path),
        flow_type=flow_type,
        options=AgentSessionOptions(interrupt_deadline=deadline, built_in_tools=built_ins),
    )


@contextmanager
def scripted_runner(
    model_script: Sequence[Mapping[str, Any]], log_path: str
) -> Iterator[OpenAiAgentsRunner[None]]:
    """The same agents with a model that answers `model_script` (run-state fixtures)."""
    script = ModelScript(model_script)

    async def respond(call: ModelCall) -> Any:
        reply = script.next_reply(
            results=[(name, output) for _, name, output in _results(_items(call))],
            tools=[str(getattr(t, "name", "")) for t in call.tools],
        )
        if "text" in reply:
            return [assistant_message(reply["text"])]
        return [
            function_call(c["name"], c["arguments"], call_id=c["id"]) for c in reply["tool_calls"]
        ]

    yield _runner(OpenAiAgentsRunner, respond, log_path)


def _responder(log_path: str) -> ModelResponder:
    async def respond(call: ModelCall) -> Any:
        items = _items(call)
        prompts = _prompts(items)
        prompt = prompts[-1] if prompts else ""
        results = _results(items)
        tools = sorted(str(getattr(t, "name", "")) for t in call.tools)
        _log(
            log_path,
            {
                "kind": "model",
                "items": len(items),
                "prompts": prompts,
                "tools": tools,
                "results": {call_id: output for call_id, _, output in results},
            },
        )
        n = len(prompts)
        if "refund" in tools:  # the billing agent, after the handoff
            refunds = [output for _, name, output in results if name == "refund"]
            if refunds:
                return [assistant_message(f"Billing: {refunds[0]}")]
            return [function_call("refund", {"order": "A-1"}, call_id=f"f{n}")]
        if prompt.startswith("refund"):
            return [function_call("transfer_to_billing", {}, call_id=f"h{n}")]
        if results:
            if prompt.startswith("fail"):
                raise RuntimeError("model unavailable")
            if prompt.startswith("slow"):
                await _gate(f"{log_path}.model-gate")
            text = "; ".join(f"{name}={output}" for _, name, output in results)
            return [assistant_message(f"Results: {text}")]
        if prompt.startswith("ask") and "ask_user" in tools:
            return [function_call("ask_user", {"question": "Which city?"}, call_id=f"q{n}")]
        if prompt.startswith(("weather", "slow")):
            return [function_call("get_weather", {"city": "Paris"}, call_id=f"w{n}")]
        if prompt.startswith("parallel"):
            return [
                function_call("get_weather", {"city": "Oslo"}, call_id=f"a{n}"),
                function_call("get_weather", {"city": "Lima"}, call_id=f"b{n}"),
            ]
        if prompt.startswith("book"):
            return [
                function_call("get_weather", {"city": "Rome"}, call_id=f"r{n}"),
                function_call("book_trip", {"city": "Rome"}, call_id=f"k{n}"),
            ]
        if prompt.startswith("charge"):
            return [function_call("charge", {"usd": 5}, call_id=f"p{n}")]
        if prompt.startswith("fail"):
            return [function_call("charge_now", {"usd": 5}, call_id=f"f{n}")]
        if prompt.startswith("shout"):
            return [assistant_message("HELLO THERE")]
        return [assistant_message(f"I have seen {len(items)} messages.")]

    return respond


def _runner(
    runner_type: type[OpenAiAgentsRunner[None]], respond: ModelResponder, log_path: str
) -> OpenAiAgentsRunner[None]:
    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        info = dex_run_info()
        _log(
            log_path, {"kind": "tool", "name": "get_weather", "key": info and info.idempotency_key}
        )
        return f"sunny in {city}"

    @function_tool(needs_approval=True)
    def book_trip(city: str) -> str:
        """Books a trip."""
        _log(log_path, {"kind": "tool", "name": "book_trip"})
        return f"booked {city}"

    @function_tool
    async def charge(usd: int) -> str:
        """Charges the card."""
        info = dex_run_info()
        _log(log_path, {"kind": "tool", "name": "charge", "key": info and info.idempotency_key})
        await _gate(f"{log_path}.charge-gate")
        return f"charged {usd} USD"

    @function_tool
    def charge_now(usd: int) -> str:
        """Charges the card at once."""
        _log(log_path, {"kind": "tool", "name": "charge_now"})
        return f"charged {usd} USD"

    @function_tool
    def refund(order: str) -> str:
        """Refunds an order."""
        _log(log_path, {"kind": "tool", "name": "refund"})
        return f"refunded {order}"

    @input_guardrail
    def no_passwords(
        ctx: RunContextWrapper[Any], agent: Agent[Any], data: Any
    ) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(
            output_info="the message asks for a password",
            tripwire_triggered="password" in str(data),
        )

    @output_guardrail
    def no_shouting(
        ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(
            output_info="the answer shouts", tripwire_triggered=str(output).isupper()
        )

    model = RespondingModel(respond)
    billing: Agent[Any] = Agent(name="billing", model=model, tools=[refund])
    agent: Agent[Any] = Agent(
        name="assistant",
        model=model,
        tools=[get_weather, book_trip, charge, charge_now],
        handoffs=[billing],
        input_guardrails=[no_passwords],
        output_guardrails=[no_shouting],
    )
    no_approval_write = ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=False)
    return runner_type(
        agent,
        tool_policies={
            "get_weather": ToolPolicy(effect=ToolEffect.READ),
            "refund": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE),
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
    parser.add_argument("--factory", default="build_flow")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    factories = {
        "build_flow": build_flow,
        "build_stale_state_flow": build_stale_state_flow,
        "build_built_ins_flow": build_built_ins_flow,
    }
    flow = factories[args.factory](args.flow_type, args.log, args.interrupt_deadline)
    run_worker([flow], server_address=args.server, on_ready=lambda: print("ready", flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
