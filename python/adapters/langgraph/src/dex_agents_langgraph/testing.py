"""Chat models for tests and examples: no key, no network.

`create_agent` calls `bind_tools` on its model, which LangChain's fake chat
models do not implement; both models here accept the tools and ignore them,
because the script already decides which tools the model calls. Both stream
as a provider does when the graph streams (`LangGraphRunner` always does): the
text word by word, then one chunk with the tool calls, usage and metadata, so
the chunks add up to the scripted message.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = [
    "RespondingChatModel",
    "ScriptedChatModel",
    "streamed_chunks",
    "trailing_tool_messages",
]

ToolsToBind = Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool]
Respond = Callable[[list[BaseMessage]], AIMessage | Awaitable[AIMessage]]


def trailing_tool_messages(messages: Sequence[BaseMessage]) -> list[ToolMessage]:
    """The tool results after the last model message: what a scripted model answers."""
    results: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        results.insert(0, message)
    return results


def streamed_chunks(message: AIMessage) -> Iterator[ChatGenerationChunk]:
    """`message` as a streaming provider sends it: text content word by word (other
    content in one piece), then a last chunk with the rest, which adds up to it."""
    content = message.content
    if isinstance(content, str):
        for word in (w for w in re.split(r"(\s+)", content) if w):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word, id=message.id))
    elif content:
        yield ChatGenerationChunk(message=AIMessageChunk(content=content, id=message.id))
    yield ChatGenerationChunk(
        message=AIMessageChunk(
            content="" if isinstance(content, str) else [],
            id=message.id,
            tool_call_chunks=[
                tool_call_chunk(
                    name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=index
                )
                for index, call in enumerate(message.tool_calls)
            ],
            usage_metadata=message.usage_metadata,
            response_metadata=dict(message.response_metadata),
            additional_kwargs=dict(message.additional_kwargs),
            chunk_position="last",
        )
    )


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the scripted messages in order."""

    def bind_tools(
        self, tools: ToolsToBind, *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        del tools, tool_choice, kwargs
        return self

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        # GenericFakeChatModel's own streaming drops tool calls and usage.
        kwargs.pop("run_manager", None)  # LangChain reports each chunk itself
        reply = self._generate(messages, *args, **kwargs).generations[0].message
        assert isinstance(reply, AIMessage)
        yield from streamed_chunks(reply)

    @classmethod
    def of(cls, *replies: AIMessage | str) -> ScriptedChatModel:
        return cls(messages=iter(replies))


class RespondingChatModel(BaseChatModel):
    """Answers each call with `respond(messages)` (sync or async), so the reply can
    depend on the conversation alone and a restarted Worker answers the same way."""

    respond: Respond

    @property
    def _llm_type(self) -> str:
        return "dex-responding"

    def bind_tools(
        self, tools: ToolsToBind, *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        del tools, tool_choice, kwargs
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=await self._areply(messages))])

    def _stream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        yield from streamed_chunks(self._reply(messages))

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in streamed_chunks(await self._areply(messages)):
            yield chunk

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        reply = self.respond(messages)
        if inspect.isawaitable(reply):
            raise TypeError("an async `respond` needs the graph to run asynchronously")
        return reply

    async def _areply(self, messages: list[BaseMessage]) -> AIMessage:
        reply = self.respond(messages)
        return await reply if inspect.isawaitable(reply) else reply
