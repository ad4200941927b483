"""Provider-neutral model requests and responses: one `complete` call per model Step."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias, runtime_checkable

from dex_agents._runner.values import ModelCallMetadata

# --- messages -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class UserMessage:
    """Text from the user, or a `[Dex]` note the session shows the model as user text."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ModelToolCall:
    """A tool call as the model asked for it."""

    tool_call_id: str
    """The provider's ID; the session needs it non-empty, without `/`, unique in the turn."""
    tool_name: str
    arguments: str
    """JSON text, passed on exactly as the model wrote it."""


@dataclass(frozen=True, kw_only=True)
class AssistantMessage:
    """One earlier model response: its text and the tool calls it asked for."""

    text: str | None = None
    reasoning: str | None = None
    """Kept for the record; clients decide whether a provider takes it back."""
    tool_calls: Sequence[ModelToolCall] = ()


@dataclass(frozen=True, kw_only=True)
class ToolResultMessage:
    """The model-visible result of one tool call."""

    tool_call_id: str
    tool_name: str
    output: str


ModelMessage: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage


# --- tools and settings -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ToolDefinition:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: Mapping[str, object]
    """JSON Schema of the arguments object."""


@dataclass(frozen=True, kw_only=True)
class NamedToolChoice:
    """Forces a call of one named tool."""

    name: str


ModelToolChoice: TypeAlias = Literal["auto", "required", "none"] | NamedToolChoice
"""`auto` lets the model answer in text; `required` and a named tool force a tool call."""


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Generation settings every client understands; `extra` passes provider options on."""

    max_output_tokens: int | None = None
    temperature: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)
    """Passed to the provider call as keyword arguments, unchanged."""


@dataclass(frozen=True, kw_only=True)
class ModelDelta:
    """A piece of streamed output, written to AgentEvents as it arrives."""

    kind: Literal["text", "reasoning"]
    text: str


DeltaCallback: TypeAlias = Callable[[ModelDelta], None]


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """Everything one model call needs, in a form no provider owns."""

    instructions: str | None
    """The system prompt, or None for none."""
    messages: Sequence[ModelMessage]
    tools: Sequence[ToolDefinition] = ()
    tool_choice: ModelToolChoice = "auto"
    settings: ModelSettings = field(default_factory=ModelSettings)
    session_settings: Mapping[str, object] = field(default_factory=dict)
    """The turn's session settings, for clients that read per-session options."""
    on_delta: DeltaCallback | None = None
    """Receives text and reasoning deltas while the response streams; None disables it."""


# --- the response -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ModelUsage:
    """Token counts of one model call; zero where the provider reports none."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    """Part of `input_tokens` served from the provider's prompt cache."""
    reasoning_tokens: int = 0
    """Part of `output_tokens` spent on reasoning."""


@dataclass(frozen=True, kw_only=True)
class ModelResponse:
    """One complete model response."""

    text: str | None = None
    reasoning: str | None = None
    tool_calls: Sequence[ModelToolCall] = ()
    usage: ModelUsage = field(default_factory=ModelUsage)
    metadata: ModelCallMetadata | None = None
    """Names the chat span; never stored."""


@runtime_checkable
class ModelClient(Protocol):
    """Makes exactly one model call per `complete`.

    Cancelling the coroutine must stop the call, because `cancel_turn` cancels a
    running RunModel Step that way.
    """

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """One model call; streams deltas to `request.on_delta` when it is set."""
        ...

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        """Whether the model accepts `required` or a named tool for these session settings."""
        ...
