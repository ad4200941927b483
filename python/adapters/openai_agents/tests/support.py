"""The unit tests' agents: a RespondingModel that decides from the call's input items."""

from __future__ import annotations

from typing import Any

from agents import Agent, function_tool
from agents.testing import ModelCall, assistant_message, function_call
from dex_agents_openai_agents import dex_run_info
from dex_agents_openai_agents.testing import RespondingModel

RAN: list[tuple[str, str | None]] = []
"""Tool bodies that ran: (tool name, idempotency key)."""


def items_of(call: ModelCall) -> list[dict[str, Any]]:
    raw = call.input if isinstance(call.input, list) else [{"role": "user", "content": call.input}]
    return [i if isinstance(i, dict) else i.model_dump(exclude_unset=True) for i in raw]


def last_prompt(call: ModelCall) -> str:
    prompts = [i["content"] for i in items_of(call) if i.get("role") == "user"]
    return str(prompts[-1]) if prompts else ""


def outputs(call: ModelCall) -> dict[str, str]:
    """The function call outputs after the last user message."""
    found: dict[str, str] = {}
    for item in items_of(call):
        if item.get("role") == "user":
            found = {}
        elif item.get("type") == "function_call_output":
            found[item["call_id"]] = str(item["output"])
    return found


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    info = dex_run_info()
    RAN.append(("get_weather", info.idempotency_key if info else None))
    return f"sunny in {city}"


@function_tool
def explode(city: str) -> str:
    """Always fails."""
    RAN.append(("explode", None))
    raise RuntimeError(f"no weather station in {city}")


@function_tool(needs_approval=True)
def book_trip(city: str) -> str:
    """Books a trip."""
    RAN.append(("book_trip", None))
    return f"booked {city}"


def respond(call: ModelCall) -> Any:
    prompt = last_prompt(call)
    results = outputs(call)
    if results:
        return [assistant_message("Results: " + "; ".join(f"{k}={v}" for k, v in results.items()))]
    if prompt.startswith("weather"):
        return [function_call("get_weather", {"city": "Paris"}, call_id="w1")]
    if prompt.startswith("parallel"):
        return [
            function_call("get_weather", {"city": "Oslo"}, call_id="a1"),
            function_call("get_weather", {"city": "Lima"}, call_id="b1"),
        ]
    if prompt.startswith("explode"):
        return [function_call("explode", {"city": "Nowhere"}, call_id="x1")]
    if prompt.startswith("book"):
        return [
            function_call("get_weather", {"city": "Rome"}, call_id="r1"),
            function_call("book_trip", {"city": "Rome"}, call_id="k1"),
        ]
    return [assistant_message(f"I have seen {len(items_of(call))} items.")]


def weather_agent(**kwargs: Any) -> Agent[Any]:
    return Agent(
        name="weather",
        model=RespondingModel(respond),
        tools=[get_weather, explode, book_trip],
        **kwargs,
    )


@function_tool
def refund(order: str) -> str:
    """Refunds an order."""
    RAN.append(("refund", None))
    return f"refunded {order}"


def respond_with_handoff(call: ModelCall) -> Any:
    """Triage hands refunds to billing; billing calls `refund`, then answers."""
    names = {getattr(tool, "name", None) for tool in call.tools}
    results = outputs(call)
    if "refund" not in names:  # the triage agent
        if results:  # the handoff's own output: the SDK continues with billing
            return [assistant_message("triage should not answer after a handoff")]
        return [function_call("transfer_to_billing", {}, call_id="h1")]
    refunds = [value for value in results.values() if "refunded" in value]
    if refunds:
        return [assistant_message("Billing: " + "; ".join(refunds))]
    return [function_call("refund", {"order": "A-1"}, call_id="f1")]


def handoff_agents() -> Agent[Any]:
    model = RespondingModel(respond_with_handoff)
    billing: Agent[Any] = Agent(name="billing", model=model, tools=[refund])
    return Agent(name="triage", model=model, handoffs=[billing])
