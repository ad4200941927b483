"""Maps provider-neutral requests to LiteLLM's OpenAI-style chat format and back.

Kept apart from the client so the mapping is testable without LiteLLM: responses
are read by field name from objects or dicts, which is how LiteLLM's pydantic
responses and test fakes both look.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dex_agents._runner.values import ModelCallMetadata
from dex_agents.models._types import (
    AssistantMessage,
    ModelDelta,
    ModelRequest,
    ModelResponse,
    ModelToolCall,
    ModelUsage,
    NamedToolChoice,
    ToolResultMessage,
    UserMessage,
)

__all__ = ["StreamAccumulator", "build_completion_kwargs", "read_response", "read_usage"]

JsonObject = dict[str, object]


def build_completion_kwargs(
    *, model: str, request: ModelRequest, stream: bool, defaults: Mapping[str, object]
) -> JsonObject:
    """The keyword arguments of one `litellm.acompletion` call.

    Precedence, lowest first: the client's defaults, then the request's settings.
    """
    kwargs: JsonObject = dict(defaults)
    kwargs["model"] = model
    kwargs["messages"] = _messages(request)
    if request.tools:
        kwargs["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": dict(tool.parameters),
                },
            }
            for tool in request.tools
        ]
        kwargs["tool_choice"] = _tool_choice(request)
    settings = request.settings
    if settings.max_output_tokens is not None:
        kwargs["max_tokens"] = settings.max_output_tokens
    if settings.temperature is not None:
        kwargs["temperature"] = settings.temperature
    kwargs.update(settings.extra)
    if stream:
        kwargs["stream"] = True
        # Without this, OpenAI-compatible streams carry no usage at all.
        kwargs["stream_options"] = {"include_usage": True}
    return kwargs


def _tool_choice(request: ModelRequest) -> object:
    choice = request.tool_choice
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def _messages(request: ModelRequest) -> list[JsonObject]:
    out: list[JsonObject] = []
    if request.instructions:
        out.append({"role": "system", "content": request.instructions})
    for message in request.messages:
        if isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            item: JsonObject = {"role": "assistant", "content": message.text or None}
            if message.tool_calls:
                item["tool_calls"] = [
                    {
                        "id": call.tool_call_id,
                        "type": "function",
                        "function": {"name": call.tool_name, "arguments": call.arguments},
                    }
                    for call in message.tool_calls
                ]
            out.append(item)
        elif isinstance(message, ToolResultMessage):
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": message.tool_call_id,
                    "name": message.tool_name,
                    "content": message.output,
                }
            )
    return out


# --- reading responses --------------------------------------------------------------


def _get(obj: object, name: str) -> object:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def read_usage(usage: object) -> ModelUsage:
    """OpenAI-style usage, with the cache and reasoning details LiteLLM fills per provider."""
    return ModelUsage(
        input_tokens=_int(_get(usage, "prompt_tokens")),
        output_tokens=_int(_get(usage, "completion_tokens")),
        cached_input_tokens=_int(_get(_get(usage, "prompt_tokens_details"), "cached_tokens")),
        reasoning_tokens=_int(_get(_get(usage, "completion_tokens_details"), "reasoning_tokens")),
    )


def _provider(source: object, model: str) -> str | None:
    hidden = _get(source, "_hidden_params")
    provider = _str(_get(hidden, "custom_llm_provider")) or _str(
        _get(source, "custom_llm_provider")
    )
    if provider:
        return provider
    return model.split("/", 1)[0] if "/" in model else None


def read_response(response: object, *, model: str) -> ModelResponse:
    """A non-streamed `ModelResponse` from LiteLLM's chat completion."""
    choices = _list(_get(response, "choices"))
    message = _get(choices[0], "message") if choices else None
    tool_calls = tuple(
        ModelToolCall(
            tool_call_id=_str(_get(call, "id")) or "",
            tool_name=_str(_get(_get(call, "function"), "name")) or "",
            arguments=_str(_get(_get(call, "function"), "arguments")) or "{}",
        )
        for call in _list(_get(message, "tool_calls"))
    )
    finish = tuple(r for r in (_str(_get(c, "finish_reason")) for c in choices) if r)
    return ModelResponse(
        text=_str(_get(message, "content")) or None,
        reasoning=_str(_get(message, "reasoning_content")) or None,
        tool_calls=tool_calls,
        usage=read_usage(_get(response, "usage")),
        metadata=ModelCallMetadata(
            request_model=model,
            response_model=_str(_get(response, "model")),
            provider_name=_provider(response, model),
            response_id=_str(_get(response, "id")),
            finish_reasons=list(finish),
        ),
    )


@dataclass(kw_only=True)
class _ToolCallParts:
    tool_call_id: str = ""
    tool_name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class StreamAccumulator:
    """Joins streamed chunks into one response and reports deltas as they arrive."""

    model: str
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCallParts] = field(default_factory=dict)
    usage: ModelUsage = field(default_factory=ModelUsage)
    finish_reasons: list[str] = field(default_factory=list)
    response_model: str | None = None
    response_id: str | None = None

    def add(self, chunk: object) -> list[ModelDelta]:
        """Adds one chunk; returns the deltas to stream in arrival order."""
        deltas: list[ModelDelta] = []
        self.response_model = self.response_model or _str(_get(chunk, "model"))
        self.response_id = self.response_id or _str(_get(chunk, "id"))
        usage = _get(chunk, "usage")
        if usage is not None:
            self.usage = read_usage(usage)
        for choice in _list(_get(chunk, "choices")):
            delta = _get(choice, "delta")
            reasoning = _str(_get(delta, "reasoning_content"))
            if reasoning:
                self.reasoning.append(reasoning)
                deltas.append(ModelDelta(kind="reasoning", text=reasoning))
            content = _str(_get(delta, "content"))
            if content:
                self.text.append(content)
                deltas.append(ModelDelta(kind="text", text=content))
            for call in _list(_get(delta, "tool_calls")):
                self._add_tool_call(call)
            reason = _str(_get(choice, "finish_reason"))
            if reason:
                self.finish_reasons.append(reason)
        return deltas

    def _add_tool_call(self, call: object) -> None:
        index = _get(call, "index")
        call_id = _str(_get(call, "id"))
        if not isinstance(index, int):
            # Some providers omit the index: a new ID starts a new call, no ID continues one.
            known = [k for k, parts in self.calls.items() if parts.tool_call_id == call_id]
            if known:
                index = known[0]
            elif call_id or not self.calls:
                index = len(self.calls)
            else:
                index = max(self.calls)
        parts = self.calls.setdefault(index, _ToolCallParts())
        if call_id:
            parts.tool_call_id = call_id
        function = _get(call, "function")
        name = _str(_get(function, "name"))
        if name:
            parts.tool_name = name
        arguments = _str(_get(function, "arguments"))
        if arguments:
            parts.arguments.append(arguments)

    def response(self, *, provider_source: object = None) -> ModelResponse:
        return ModelResponse(
            text="".join(self.text) or None,
            reasoning="".join(self.reasoning) or None,
            tool_calls=tuple(
                ModelToolCall(
                    tool_call_id=parts.tool_call_id,
                    tool_name=parts.tool_name,
                    arguments="".join(parts.arguments) or "{}",
                )
                for _, parts in sorted(self.calls.items())
            ),
            usage=self.usage,
            metadata=ModelCallMetadata(
                request_model=self.model,
                response_model=self.response_model,
                provider_name=_provider(provider_source, self.model),
                response_id=self.response_id,
                finish_reasons=list(self.finish_reasons),
            ),
        )
