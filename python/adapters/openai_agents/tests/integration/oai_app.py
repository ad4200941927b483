"""The conformance suite's app factory for the OpenAI Agents SDK (a `WorkerApp` script).

The model is the SDK's ScriptedModel answering what the data file's
`ScriptedApp` decides from the call's input items alone (never from a call
counter), so a restarted Worker answers the same way; the tools are
`ScriptedApp.run_tool`. The flows of this adapter's own cases (handoff,
guardrails, a stale RunState) share the agents; the structured-output case runs
on an agent whose `output_type` is `City` (the SDK fixes one output type per
agent). Run as a script it serves a Flow (`dex_agents_testing.conformance.serve`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
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
from dex_agents import AgentSessionFlow, ToolPolicy
from dex_agents.mcp import McpToolSource
from dex_agents.runner import AgentTurnContext, AgentTurnOutcome, ToolCallsRequested
from dex_agents_contracts import (
    ToolEffect,
    decode_run_state_envelope,
    encode_run_state_envelope,
)
from dex_agents_openai_agents import OpenAiAgentsRunner, dex_run_info
from dex_agents_openai_agents.testing import RespondingModel
from dex_agents_testing.conformance import (
    McpSourceFactory,
    ScriptedApp,
    Traits,
    serve,
    session_options,
)
from dex_agents_testing.run_state_fixtures import ModelScript
from openai.types.responses.response_reasoning_item import ResponseReasoningItem, Summary
from pydantic import BaseModel

set_tracing_disabled(True)

CONFORMANCE = Traits(
    # One stored item per tool call and per output, so the first turn is six items.
    messages_after_booking=7,
    # The final output is the model's JSON text, which the SDK parses into `City`.
    structured_output_as_text=True,
    factories={"structured_output": "build_structured_flow"},
    nonconforming={
        "structured_output_with_validator_retry": (
            "the SDK has no output validator that asks the model again: an output "
            "guardrail's tripwire raises OutputGuardrailTripwireTriggered and ends the "
            "run (agents/run_internal/guardrails.py; docs: guardrails.md, 'tripwires')"
        ),
    },
)


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
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None = None,
    *,
    built_in_tools: bool = False,
    mcp: McpSourceFactory | None = None,
    plan_mode: bool = False,
) -> AgentSessionFlow:
    """The app's agents; a case's flow adds the session's built-in tools, an MCP source
    (the starting agent's) or plan mode."""
    return _flow(
        OpenAiAgentsRunner,
        flow_type,
        log_path,
        interrupt_deadline_seconds,
        built_in_tools=built_in_tools,
        mcp=mcp,
        plan_mode=plan_mode,
    )


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


class City(BaseModel):
    name: str
    country: str


def build_structured_flow(
    flow_type: str, log_path: str, interrupt_deadline_seconds: float | None = None
) -> AgentSessionFlow:
    """The same agents, the first answering a `City` (its `output_type`)."""
    return _flow(
        OpenAiAgentsRunner, flow_type, log_path, interrupt_deadline_seconds, output_type=City
    )


def _flow(
    runner_type: type[OpenAiAgentsRunner[None]],
    flow_type: str,
    log_path: str,
    interrupt_deadline_seconds: float | None,
    *,
    built_in_tools: bool = False,
    output_type: type[BaseModel] | None = None,
    mcp: McpSourceFactory | None = None,
    plan_mode: bool = False,
) -> AgentSessionFlow:
    app = ScriptedApp(log_path)
    sources = [mcp(app.mcp_log)] if mcp else []
    return AgentSessionFlow(
        _runner(runner_type, _responder(app), app, output_type=output_type, mcp_sources=sources),
        flow_type=flow_type,
        options=session_options(
            interrupt_deadline_seconds, built_in_tools=built_in_tools, plan_mode=plan_mode
        ),
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

    yield _runner(OpenAiAgentsRunner, respond, ScriptedApp(log_path))


def _responder(app: ScriptedApp) -> ModelResponder:
    async def respond(call: ModelCall) -> Any:
        items = _items(call)
        prompts = _prompts(items)
        prompt = prompts[-1] if prompts else ""
        results = _results(items)
        tools = sorted(str(getattr(t, "name", "")) for t in call.tools)
        n = len(prompts)
        # This adapter's own cases (test_adapter_cases.py) first: handoff, guardrails.
        if "refund" in tools:  # the billing agent, after the handoff
            app.log_model(prompts=prompts, results=results, messages=len(items), tools=tools)
            refunds = [output for _, name, output in results if name == "refund"]
            if refunds:
                return [assistant_message(f"Billing: {refunds[0]}")]
            return [function_call("refund", {"order": "A-1"}, call_id=f"f{n}")]
        if not results and prompt.startswith(("refund", "shout")):
            app.log_model(prompts=prompts, results=results, messages=len(items), tools=tools)
            if prompt.startswith("refund"):
                return [function_call("transfer_to_billing", {}, call_id=f"h{n}")]
            return [assistant_message("HELLO THERE")]
        answer = await app.answer(
            prompts=prompts, results=results, messages=len(items), log={"tools": tools}
        )
        if answer.output is not None:
            return [assistant_message(json.dumps(answer.output))]
        if answer.text is not None:
            return [*_reasoning(answer.reasoning), assistant_message(answer.text)]
        return [function_call(c.name, dict(c.arguments), call_id=c.id) for c in answer.calls]

    return respond


def _reasoning(text: str | None) -> list[ResponseReasoningItem]:
    """A reasoning item with `text` as its summary, which the model streams first."""
    if not text:
        return []
    return [
        ResponseReasoningItem(
            id="rs", summary=[Summary(text=text, type="summary_text")], type="reasoning"
        )
    ]


def _runner(
    runner_type: type[OpenAiAgentsRunner[None]],
    respond: ModelResponder,
    app: ScriptedApp,
    *,
    output_type: type[BaseModel] | None = None,
    mcp_sources: Sequence[McpToolSource] = (),
) -> OpenAiAgentsRunner[None]:
    def key() -> str | None:
        info = dex_run_info()
        return info.idempotency_key if info is not None else None

    @function_tool
    async def get_weather(city: str) -> str:
        """The weather in a city."""
        return await app.run_tool("get_weather", {"city": city}, key())

    @function_tool(needs_approval=True)
    async def book_trip(city: str) -> str:
        """Books a trip."""
        return await app.run_tool("book_trip", {"city": city}, key())

    @function_tool
    async def charge(usd: int) -> str:
        """Charges the card."""
        return await app.run_tool("charge", {"usd": usd}, key())

    @function_tool
    async def charge_now(usd: int) -> str:
        """Charges the card at once."""
        return await app.run_tool("charge_now", {"usd": usd}, key())

    @function_tool
    def refund(order: str) -> str:
        """Refunds an order."""
        app.log_tool("refund", key())
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
        output_type=output_type,
    )
    policies = {**app.policies(), "refund": ToolPolicy(effect=ToolEffect.IDEMPOTENT_WRITE)}
    return runner_type(agent, tool_policies=policies, mcp_sources=mcp_sources)


if __name__ == "__main__":
    sys.exit(serve(sys.modules[__name__]))
