"""Chat models for tests and examples: no key, no network.

`create_agent` calls `bind_tools` on its model, which LangChain's fake chat
models do not implement; both models here accept the tools and ignore them,
because the script already decides which tools the model calls.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = ["RespondingChatModel", "ScriptedChatModel"]

ToolsToBind = Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool]
Respond = Callable[[list[BaseMessage]], AIMessage | Awaitable[AIMessage]]


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the scripted messages in order."""

    def bind_tools(
        self, tools: ToolsToBind, *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        del tools, tool_choice, kwargs
        return self

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
        reply = self.respond(messages)
        if inspect.isawaitable(reply):
            raise TypeError("an async `respond` needs the graph to run asynchronously")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        reply = self.respond(messages)
        if inspect.isawaitable(reply):
            reply = await reply
        return ChatResult(generations=[ChatGeneration(message=reply)])
