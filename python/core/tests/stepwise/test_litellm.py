"""LiteLLMModelClient's mapping, tested on an injected fake `acompletion`."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from dex_agents.models import (
    AssistantMessage,
    ModelDelta,
    ModelRequest,
    ModelSettings,
    ModelToolCall,
    ModelUsage,
    NamedToolChoice,
    ToolDefinition,
    ToolResultMessage,
    UserMessage,
)
from dex_agents.models.litellm import LiteLLMModelClient
from dex_agents.runner import ModelCallMetadata
from stepwise_support import run

USAGE = {
    "prompt_tokens": 120,
    "completion_tokens": 40,
    "prompt_tokens_details": {"cached_tokens": 100},
    "completion_tokens_details": {"reasoning_tokens": 25},
}


@dataclass
class FakeStream:
    """An async stream of chunks that notes whether it was closed."""

    chunks: list[object]
    hang_after: int | None = None
    closed: bool = False

    def __aiter__(self) -> AsyncIterator[object]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[object]:
        for index, chunk in enumerate(self.chunks):
            if self.hang_after is not None and index == self.hang_after:
                await asyncio.Event().wait()
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


@dataclass
class FakeCompletion:
    """Stands in for `litellm.acompletion`, recording its keyword arguments."""

    result: object
    calls: list[dict[str, object]] = field(default_factory=list)

    async def __call__(self, **kwargs: object) -> object:
        self.calls.append(kwargs)
        return self.result


def full_request(deltas: list[ModelDelta] | None = None) -> ModelRequest:
    return ModelRequest(
        instructions="Be brief.",
        messages=[
            UserMessage(text="Weather?"),
            AssistantMessage(
                text="Checking.",
                reasoning="not sent back",
                tool_calls=(
                    ModelToolCall(
                        tool_call_id="c1", tool_name="get_weather", arguments='{"city":"Oslo"}'
                    ),
                ),
            ),
            ToolResultMessage(tool_call_id="c1", tool_name="get_weather", output="Sunny"),
        ],
        tools=[
            ToolDefinition(
                name="get_weather",
                description="Weather.",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}},
            )
        ],
        tool_choice=NamedToolChoice(name="get_weather"),
        settings=ModelSettings(max_output_tokens=256, temperature=0.2, extra={"seed": 7}),
        on_delta=deltas.append if deltas is not None else None,
    )


def test_request_mapping() -> None:
    fake = FakeCompletion(result=FakeStream(chunks=[]))
    client = LiteLLMModelClient(
        "anthropic/claude-x", acompletion=fake, completion_kwargs={"timeout": 30, "seed": 1}
    )
    run(client.complete(full_request()))
    assert fake.calls == [
        {
            "timeout": 30,
            "seed": 7,
            "model": "anthropic/claude-x",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": "Checking.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "Sunny"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Weather.",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    },
                }
            ],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
            "max_tokens": 256,
            "temperature": 0.2,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    ]


def test_a_request_without_tools_sends_no_tool_choice() -> None:
    fake = FakeCompletion(result=FakeStream(chunks=[]))
    client = LiteLLMModelClient("gpt-x", acompletion=fake)
    run(client.complete(ModelRequest(instructions=None, messages=[UserMessage(text="Hi")])))
    assert "tools" not in fake.calls[0]
    assert "tool_choice" not in fake.calls[0]
    assert fake.calls[0]["messages"] == [{"role": "user", "content": "Hi"}]


def test_streamed_response_with_deltas_tool_calls_and_usage() -> None:
    def chunk(delta: dict[str, object], finish: str | None = None, **extra: object) -> object:
        return {
            "id": "resp-1",
            "model": "claude-x-2026",
            "choices": [{"delta": delta, "finish_reason": finish}],
            **extra,
        }

    stream = FakeStream(
        chunks=[
            chunk({"reasoning_content": "Think."}),
            chunk({"content": "Let me "}),
            chunk({"content": "check."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
            chunk({"tool_calls": [{"index": 1, "id": "c2", "function": {"name": "get_time"}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
            chunk({}, finish="tool_calls"),
            {"id": "resp-1", "choices": [], "usage": USAGE},
        ]
    )
    deltas: list[ModelDelta] = []
    client = LiteLLMModelClient("anthropic/claude-x", acompletion=FakeCompletion(result=stream))
    response = run(client.complete(full_request(deltas)))
    assert deltas == [
        ModelDelta(kind="reasoning", text="Think."),
        ModelDelta(kind="text", text="Let me "),
        ModelDelta(kind="text", text="check."),
    ]
    assert response.text == "Let me check."
    assert response.reasoning == "Think."
    assert response.tool_calls == (
        ModelToolCall(tool_call_id="c1", tool_name="get_weather", arguments='{"city":"Oslo"}'),
        ModelToolCall(tool_call_id="c2", tool_name="get_time", arguments="{}"),
    )
    assert response.usage == ModelUsage(
        input_tokens=120, output_tokens=40, cached_input_tokens=100, reasoning_tokens=25
    )
    assert response.metadata == ModelCallMetadata(
        request_model="anthropic/claude-x",
        response_model="claude-x-2026",
        provider_name="anthropic",
        response_id="resp-1",
        finish_reasons=["tool_calls"],
    )
    assert stream.closed


def test_non_streamed_response() -> None:
    response_object = SimpleNamespace(
        id="r9",
        model="gpt-x-1",
        _hidden_params={"custom_llm_provider": "openai"},
        choices=[
            SimpleNamespace(
                finish_reason="stop",
                message=SimpleNamespace(
                    content="Sunny.",
                    reasoning_content=None,
                    tool_calls=[
                        SimpleNamespace(
                            id="c1", function=SimpleNamespace(name="f", arguments='{"a":1}')
                        )
                    ],
                ),
            )
        ],
        usage=SimpleNamespace(
            prompt_tokens=10,
            completion_tokens=2,
            prompt_tokens_details=None,
            completion_tokens_details=None,
        ),
    )
    fake = FakeCompletion(result=response_object)
    client = LiteLLMModelClient("gpt-x", stream=False, acompletion=fake)
    response = run(client.complete(full_request()))
    assert "stream" not in fake.calls[0]
    assert response.text == "Sunny."
    assert response.reasoning is None
    assert response.tool_calls == (
        ModelToolCall(tool_call_id="c1", tool_name="f", arguments='{"a":1}'),
    )
    assert response.usage == ModelUsage(input_tokens=10, output_tokens=2)
    assert response.metadata is not None
    assert (response.metadata.provider_name, response.metadata.response_id) == ("openai", "r9")


def test_cancellation_stops_the_call_and_closes_the_stream() -> None:
    stream = FakeStream(
        chunks=[{"choices": [{"delta": {"content": "Hel"}}]}, {"choices": []}], hang_after=1
    )
    deltas: list[ModelDelta] = []
    client = LiteLLMModelClient("gpt-x", acompletion=FakeCompletion(result=stream))

    async def scenario() -> None:
        first_delta = asyncio.Event()

        def on_delta(delta: ModelDelta) -> None:
            deltas.append(delta)
            first_delta.set()

        request = dataclasses.replace(full_request(), on_delta=on_delta)
        call = asyncio.ensure_future(client.complete(request))
        await first_delta.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    run(scenario())
    assert deltas == [ModelDelta(kind="text", text="Hel")]
    assert stream.closed


def test_forced_tool_choice_support() -> None:
    fake = FakeCompletion(result=FakeStream(chunks=[]))
    assert LiteLLMModelClient("m", acompletion=fake).supports_forced_tool_choice({})
    thinking = LiteLLMModelClient(
        "m", acompletion=fake, completion_kwargs={"thinking": {"type": "enabled"}}
    )
    assert not thinking.supports_forced_tool_choice({})
    assert LiteLLMModelClient(
        "m", acompletion=fake, forced_tool_choice=True, completion_kwargs={"thinking": {}}
    ).supports_forced_tool_choice({})


def test_missing_litellm_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    with pytest.raises(ImportError, match=r"pip install 'dex-agents\[litellm\]'"):
        LiteLLMModelClient("gpt-x")
