"""LangChain messages <-> the session's stored messages.

A stored message's `framework_item` is the LangChain message in
`message_to_dict` form (`{"type": ..., "data": ...}`), so any later turn, in
any Worker, replays exactly what the graph wrote. The text and tool fields are
a projection for display; nothing reads them back. An assistant message with
several tool calls is stored once, with its text only: its calls each get
their own tool message after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from dex_agents.runner import FrameworkItemError, FrameworkMessage
from dex_agents_contracts import AgentMessage, AgentUsage, MessageRole
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
)

__all__ = [
    "history_from_stored",
    "to_framework_message",
    "usage_of",
]


def to_framework_message(message: BaseMessage) -> FrameworkMessage:
    item = json.dumps(message_to_dict(message), separators=(",", ":"))
    if isinstance(message, ToolMessage):
        return FrameworkMessage(
            role=MessageRole.TOOL,
            framework_item=item,
            tool_call_id=message.tool_call_id,
            tool_name=message.name,
            tool_output=str(message.text),
        )
    if isinstance(message, AIMessage):
        calls = message.tool_calls
        only = calls[0] if len(calls) == 1 else None
        return FrameworkMessage(
            role=MessageRole.ASSISTANT,
            framework_item=item,
            text=str(message.text) or None,
            tool_call_id=only["id"] if only else None,
            tool_name=only["name"] if only else None,
            tool_arguments=json.dumps(only["args"], separators=(",", ":")) if only else None,
        )
    return FrameworkMessage(role=MessageRole.USER, framework_item=item, text=str(message.text))


def user_message(text: str) -> HumanMessage:
    return HumanMessage(content=text)


def history_from_stored(messages: Iterable[AgentMessage]) -> list[BaseMessage]:
    """The LangChain messages of the stored conversation, oldest first."""
    items: list[dict[str, object]] = []
    for stored in messages:
        try:
            item = json.loads(stored.framework_item)
        except (TypeError, ValueError) as error:
            raise FrameworkItemError(
                f"stored message {stored.sequence} is not JSON: {error}"
            ) from error
        if not isinstance(item, dict) or "type" not in item or "data" not in item:
            raise FrameworkItemError(
                f"stored message {stored.sequence} is not a LangChain message "
                "(expected message_to_dict's {type, data})"
            )
        items.append(item)
    try:
        return list(messages_from_dict(items))
    except (KeyError, TypeError, ValueError) as error:
        raise FrameworkItemError(f"a stored message is not a LangChain message: {error}") from error


def usage_of(responses: Sequence[AIMessage]) -> AgentUsage:
    """The session's usage record for the model calls that produced `responses`."""
    usage = AgentUsage(model_calls=len(responses))
    for response in responses:
        reported = response.usage_metadata
        if reported is None:
            continue
        usage.input_tokens += reported.get("input_tokens", 0)
        usage.output_tokens += reported.get("output_tokens", 0)
        usage.cached_input_tokens += reported.get("input_token_details", {}).get("cache_read", 0)
        usage.reasoning_tokens += reported.get("output_token_details", {}).get("reasoning", 0)
    return usage
