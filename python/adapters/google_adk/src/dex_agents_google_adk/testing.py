"""Test doubles for an `AdkRunner` without Dex or a model key.

`ScriptedLlm` is an ADK `BaseLlm` whose every call is answered by a responder
that decides from the request (its contents and tools) rather than from a
script position, so a model call that a retried Step repeats gets the same
answer, on any Worker. `FakeSession` is the core's in-memory session typed for
this runner: it drives whole turns with no Dex server.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import dex_agents.offline
from dex_agents.offline import RecordingEventWriter
from dex_agents.offline import run_sync as run
from google.adk.models import LlmCapabilities
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr

from dex_agents_google_adk._runner import AdkRunner

__all__ = [
    "FakeSession",
    "RecordingEventWriter",
    "ScriptedLlm",
    "call",
    "declarations",
    "function_results",
    "prompts",
    "run",
    "text",
]

Reply = list[types.Part] | LlmResponse
Responder = Callable[[LlmRequest], Reply | Awaitable[Reply]]


class ScriptedLlm(BaseLlm):
    """A model whose every call is answered by `responder` (a list of parts, or a whole
    `LlmResponse` to set usage); `calls` counts the calls this object answered. A
    streamed call (`RunConfig(streaming_mode=StreamingMode.SSE)`) first yields each
    text part in partial pieces, as Gemini does."""

    _responder: Responder = PrivateAttr()
    calls: int = 0

    def __init__(self, responder: Responder, *, model: str = "scripted", **data: Any) -> None:
        super().__init__(model=model, **data)
        self._responder = responder

    @property
    def capabilities(self) -> LlmCapabilities:
        """Like today's Gemini models: an `output_schema` goes on the request next to the
        tools (rather than as ADK's `set_model_response` tool)."""
        return LlmCapabilities(output_schema_and_tools=True)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.calls += 1
        reply = self._responder(llm_request)
        if inspect.isawaitable(reply):
            reply = await reply
        response = (
            reply
            if isinstance(reply, LlmResponse)
            else LlmResponse(content=types.Content(role="model", parts=list(reply)))
        )
        if stream:  # as Gemini streams: the text in pieces, then the whole response
            for part in response.content.parts or [] if response.content else []:
                for piece in _pieces(part.text or ""):
                    yield LlmResponse(
                        content=types.Content(
                            role="model", parts=[types.Part(text=piece, thought=part.thought)]
                        ),
                        partial=True,
                    )
        yield response


def _pieces(text: str) -> list[str]:
    """A text in two streamed pieces (one when it is a single character or empty)."""
    middle = len(text) // 2
    return [piece for piece in (text[:middle], text[middle:]) if piece]


def text(value: str) -> types.Part:
    return types.Part(text=value)


def call(name: str, args: dict[str, Any], call_id: str) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def declarations(request: LlmRequest) -> list[types.FunctionDeclaration]:
    """The function declarations the request offers the model."""
    return [
        declaration
        for tool in request.config.tools or []
        if isinstance(tool, types.Tool)
        for declaration in tool.function_declarations or []
    ]


def prompts(request: LlmRequest) -> list[str]:
    """The user texts of the request, oldest first."""
    return [
        part.text
        for content in request.contents
        if content.role == "user"
        for part in content.parts or []
        if part.text
    ]


def function_results(request: LlmRequest) -> list[tuple[str, str, str]]:
    """(call ID, tool name, result) of the function responses after the last user text."""
    found: list[tuple[str, str, str]] = []
    for content in request.contents:
        for part in content.parts or []:
            if content.role == "user" and part.text:
                found = []
            response = part.function_response
            if response is not None:
                value = response.response or {}
                shown = value.get("result") if set(value) == {"result"} else None
                found.append(
                    (
                        response.id or "",
                        response.name or "",
                        shown if isinstance(shown, str) else json.dumps(value, default=str),
                    )
                )
    return found


@dataclass
class FakeSession(dex_agents.offline.FakeSession[AdkRunner]):
    """The core's `FakeSession`, typed for an `AdkRunner`."""
