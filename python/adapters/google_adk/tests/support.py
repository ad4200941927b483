"""The unit tests' agents: a ScriptedLlm that decides from the request's contents."""

from __future__ import annotations

from typing import Any

from dex_agents_google_adk import dex_run_info
from dex_agents_google_adk.testing import ScriptedLlm, call, function_results, prompts, text
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.function_tool import FunctionTool
from google.genai import types

RAN: list[tuple[str, str | None]] = []
"""Tool bodies that ran: (tool name, idempotency key)."""


def get_weather(city: str) -> str:
    """The weather in a city."""
    info = dex_run_info()
    RAN.append(("get_weather", info.idempotency_key if info else None))
    return f"sunny in {city}"


def explode(city: str) -> str:
    """Always fails."""
    RAN.append(("explode", None))
    raise RuntimeError(f"no weather station in {city}")


def book_trip(city: str) -> dict[str, Any]:
    """Books a trip."""
    RAN.append(("book_trip", None))
    return {"booking": f"booked {city}", "seats": 1}


def respond(request: LlmRequest) -> list[types.Part]:
    said = prompts(request)
    prompt = said[-1] if said else ""
    results = function_results(request)
    if results:
        return [text("Results: " + "; ".join(f"{i}={r}" for i, _, r in results))]
    if prompt.startswith("weather"):
        return [call("get_weather", {"city": "Paris"}, "w1")]
    if prompt.startswith("parallel"):
        return [
            call("get_weather", {"city": "Oslo"}, "a1"),
            call("get_weather", {"city": "Lima"}, "b1"),
        ]
    if prompt.startswith("explode"):
        return [call("explode", {"city": "Nowhere"}, "x1")]
    if prompt.startswith("book"):
        return [
            call("get_weather", {"city": "Rome"}, "r1"),
            call("book_trip", {"city": "Rome"}, "k1"),
        ]
    return [text(f"I have seen {len(request.contents)} contents.")]


def weather_agent(**kwargs: Any) -> LlmAgent:
    return LlmAgent(
        name="weather",
        model=ScriptedLlm(respond),
        tools=[get_weather, explode, FunctionTool(book_trip, require_confirmation=True)],
        **kwargs,
    )
