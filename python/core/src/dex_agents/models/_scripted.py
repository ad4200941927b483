"""A deterministic model client that replays a script: tests and the demo need no API key."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from dex_agents._runner.values import ModelCallMetadata
from dex_agents.models._types import (
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    ModelUsage,
)

__all__ = [
    "ScriptEntry",
    "ScriptExhaustedError",
    "ScriptedError",
    "ScriptedModelClient",
    "ScriptedResponse",
    "scripted_answer",
    "scripted_tool_calls",
]

Gate: TypeAlias = Callable[[], Awaitable[object]]
"""Awaited before the response is returned, e.g. `asyncio.Event().wait`."""


@dataclass(frozen=True, kw_only=True)
class ScriptedResponse:
    """One scripted model response."""

    text: str | None = None
    reasoning: str | None = None
    tool_calls: Sequence[ModelToolCall] = ()
    usage: ModelUsage = field(default_factory=ModelUsage)
    text_chunks: Sequence[str] | None = None
    """How `text` streams as deltas; None streams it word by word."""
    delay_seconds: float = 0.0
    """Sleeps this long before answering, like a slow model."""
    gate: Gate | None = None
    """Awaited before answering, so a test can hold the model call open."""
    delta_interval_seconds: float = 0.0
    """Sleeps this long between streamed deltas, so a demo shows text arriving."""


@dataclass(frozen=True, kw_only=True)
class ScriptedError:
    """A scripted failure: `complete` raises `error` instead of answering."""

    error: BaseException
    delay_seconds: float = 0.0
    gate: Gate | None = None


ScriptEntry: TypeAlias = ScriptedResponse | ScriptedError


class ScriptExhaustedError(RuntimeError):
    """The client got more model calls than its script has entries.

    Attributes:
        call_number: One-based number of the call that found no entry.
        script_length: How many entries the script had.
    """

    def __init__(self, *, call_number: int, script_length: int, request: ModelRequest) -> None:
        last = request.messages[-1] if request.messages else None
        super().__init__(
            f"`ScriptedModelClient` has no entry for model call #{call_number}: the script "
            f"has {script_length} entries. Last message of the request: {last!r}"
        )
        self.call_number = call_number
        self.script_length = script_length


def scripted_answer(
    text: str, *, usage: ModelUsage | None = None, reasoning: str | None = None
) -> ScriptedResponse:
    """A final text answer."""
    return ScriptedResponse(text=text, reasoning=reasoning, usage=usage or ModelUsage())


def scripted_tool_calls(
    *calls: tuple[str, str, str], text: str | None = None, usage: ModelUsage | None = None
) -> ScriptedResponse:
    """A response asking for tools, each given as `(tool_call_id, tool_name, arguments_json)`."""
    return ScriptedResponse(
        text=text,
        tool_calls=tuple(
            ModelToolCall(tool_call_id=call_id, tool_name=name, arguments=arguments)
            for call_id, name, arguments in calls
        ),
        usage=usage or ModelUsage(),
    )


class ScriptedModelClient:
    """Answers model calls with its script's entries, in order, and records every request.

    One client is one script: share it between the Worker's Steps in one process.
    A retried model Step consumes the next entry, which lets a test script a
    failure followed by its retry. `record_requests=False` keeps none: every
    request holds the whole model input, so over a long session the record grows
    with the square of its length (a benchmark's Worker spent seconds in garbage
    collection on it).
    """

    def __init__(
        self,
        script: Sequence[ScriptEntry],
        *,
        model_name: str = "scripted",
        forced_tool_choice: bool = True,
        record_requests: bool = True,
    ) -> None:
        self._script = list(script)
        self._next = 0
        self._lock = threading.Lock()
        self._model_name = model_name
        self._forced_tool_choice = forced_tool_choice
        self._record_requests = record_requests
        self.requests: list[ModelRequest] = []
        """Every request received, in order, including ones answered with an error
        (none with `record_requests=False`)."""

    @property
    def remaining(self) -> int:
        """Entries not consumed yet."""
        with self._lock:
            return len(self._script) - self._next

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return self._forced_tool_choice

    async def complete(self, request: ModelRequest) -> ModelResponse:
        with self._lock:
            if self._record_requests:
                self.requests.append(request)
            index = self._next
            if index >= len(self._script):
                raise ScriptExhaustedError(
                    call_number=index + 1, script_length=len(self._script), request=request
                )
            self._next += 1
            entry = self._script[index]
        if entry.delay_seconds > 0:
            await asyncio.sleep(entry.delay_seconds)
        if entry.gate is not None:
            await entry.gate()
        if isinstance(entry, ScriptedError):
            raise entry.error
        if request.on_delta is not None:
            for delta in _deltas(entry):
                request.on_delta(delta)
                if entry.delta_interval_seconds > 0:
                    await asyncio.sleep(entry.delta_interval_seconds)
        return ModelResponse(
            text=entry.text,
            reasoning=entry.reasoning,
            tool_calls=tuple(entry.tool_calls),
            usage=entry.usage,
            metadata=ModelCallMetadata(
                request_model=self._model_name,
                response_model=self._model_name,
                provider_name="scripted",
                response_id=f"scripted-{index + 1}",
                finish_reasons=["tool_calls" if entry.tool_calls else "stop"],
            ),
        )


def _deltas(entry: ScriptedResponse) -> list[ModelDelta]:
    deltas = []
    if entry.reasoning:
        deltas.append(ModelDelta(kind="reasoning", text=entry.reasoning))
    if entry.text:
        chunks = entry.text_chunks if entry.text_chunks is not None else _words(entry.text)
        deltas.extend(ModelDelta(kind="text", text=chunk) for chunk in chunks)
    return deltas


def _words(text: str) -> list[str]:
    """Splits after each space, so the chunks join back to exactly `text`."""
    pieces = text.split(" ")
    return [piece + " " for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
