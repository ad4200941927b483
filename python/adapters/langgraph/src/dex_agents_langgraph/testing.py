"""A scripted chat model for tests and examples: no key, no network."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(GenericFakeChatModel):
    """Answers with the scripted messages in order; `create_agent` can bind tools to it.

    `GenericFakeChatModel` does not implement `bind_tools`, which `create_agent`
    calls; the script already says which tools the model calls, so binding is a no-op.
    """

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        del tools, tool_choice, kwargs
        return self

    @classmethod
    def of(cls, *replies: AIMessage | str) -> ScriptedChatModel:
        return cls(messages=iter(replies))
