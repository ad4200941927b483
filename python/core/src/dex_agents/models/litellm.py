"""A `ModelClient` for any provider LiteLLM supports (install `dex-agents[litellm]`).

LiteLLM is imported only when a client is built without an injected completion
function, so this module imports without it and tests can inject a fake.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from typing import TypeAlias

from dex_agents.models._litellm_convert import (
    StreamAccumulator,
    build_completion_kwargs,
    read_response,
)
from dex_agents.models._types import ModelRequest, ModelResponse

__all__ = ["CompletionFunction", "LiteLLMModelClient"]

CompletionFunction: TypeAlias = Callable[..., Awaitable[object]]
"""`litellm.acompletion` or a stand-in with the same keyword arguments."""

_REASONING_OPTIONS = ("thinking", "reasoning_effort")


def _load_acompletion() -> CompletionFunction:
    try:
        # Imported on first use: LiteLLM is an optional extra and slow to import.
        litellm = importlib.import_module("litellm")
    except ImportError as error:
        raise ImportError(
            "`LiteLLMModelClient` needs LiteLLM: install the extra with "
            "`pip install 'dex-agents[litellm]'`"
        ) from error
    acompletion: CompletionFunction = litellm.acompletion
    return acompletion


class LiteLLMModelClient:
    """One `litellm.acompletion` call per model Step, streamed by default.

    Cancelling `complete` cancels the awaited call and closes the response stream,
    which is how `cancel_turn` stops a running model call.
    """

    def __init__(
        self,
        model: str,
        *,
        stream: bool = True,
        completion_kwargs: Mapping[str, object] | None = None,
        forced_tool_choice: bool | None = None,
        acompletion: CompletionFunction | None = None,
    ) -> None:
        """Create a client.

        Args:
            model: LiteLLM's model name, such as `anthropic/claude-sonnet-4-5`.
            stream: Stream the response, so text reaches AgentEvents as it arrives.
            completion_kwargs: Defaults for every call (`api_base`, `timeout`, ...);
                the request's settings override them.
            forced_tool_choice: Whether the model accepts a forced tool choice; None
                means yes unless `thinking` or `reasoning_effort` is set, since
                extended thinking refuses it.
            acompletion: The completion function; `litellm.acompletion` when None.
        """
        self.model = model
        self._stream = stream
        self._defaults = dict(completion_kwargs or {})
        self._forced_tool_choice = forced_tool_choice
        self._acompletion = acompletion if acompletion is not None else _load_acompletion()

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        if self._forced_tool_choice is not None:
            return self._forced_tool_choice
        return not any(option in self._defaults for option in _REASONING_OPTIONS)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        kwargs = build_completion_kwargs(
            model=self.model, request=request, stream=self._stream, defaults=self._defaults
        )
        result = await self._acompletion(**kwargs)
        if not self._stream:
            return read_response(result, model=self.model)
        accumulator = StreamAccumulator(model=self.model)
        try:
            async for chunk in _chunks(result):
                for delta in accumulator.add(chunk):
                    if request.on_delta is not None:
                        request.on_delta(delta)
        finally:
            # Runs on cancellation too: the provider connection must not outlive the Step.
            close = getattr(result, "aclose", None)
            if close is not None:
                await close()
        return accumulator.response(provider_source=result)


async def _chunks(stream: object) -> AsyncIterator[object]:
    if not isinstance(stream, AsyncIterable):
        raise TypeError(
            f"the completion function returned {type(stream).__name__}, not a stream; "
            "pass `stream=False` to `LiteLLMModelClient` for a non-streaming function"
        )
    async for chunk in stream:
        yield chunk
