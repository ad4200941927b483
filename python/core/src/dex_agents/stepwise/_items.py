"""The Stepwise transcript: provider-neutral items, stored one per message.

Every stored message's `framework_item` is one item as compact JSON. A model
response is an `assistant` item (text, reasoning) followed by one `tool_call`
item per call, so each stored message carries at most one tool call, as
`AgentMessage`'s display fields expect; building a request joins them again.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from dex_agents_contracts import AgentMessage, MessageRole

from dex_agents.models import (
    AssistantMessage,
    ModelMessage,
    ModelToolCall,
    ToolResultMessage,
    UserMessage,
)
from dex_agents.runner import FrameworkMessage
from dex_agents.stepwise._errors import RunStateError

__all__ = [
    "AssistantItem",
    "Item",
    "ToolCallItem",
    "ToolResultItem",
    "UserItem",
    "item_from_json_object",
    "item_from_message",
    "item_to_json_object",
    "item_to_message",
    "items_to_model_messages",
]


_PARSED_ITEM_CACHE_SIZE = 4_096
"""Distinct stored items whose parse a Worker keeps (a long session's history)."""
_CACHED_ITEM_MAX_CHARS = 4_096
"""Larger items (long tool outputs) are parsed each time, so the cache stays a few MB."""


@dataclass(frozen=True, kw_only=True)
class UserItem:
    text: str


@dataclass(frozen=True, kw_only=True)
class AssistantItem:
    text: str | None = None
    reasoning: str | None = None


ToolCallItem = ModelToolCall
"""A tool call the model asked for, stored as the model client gave it."""


@dataclass(frozen=True, kw_only=True)
class ToolResultItem:
    tool_call_id: str
    tool_name: str
    output: str


Item: TypeAlias = UserItem | AssistantItem | ToolCallItem | ToolResultItem
JsonObject: TypeAlias = dict[str, object]


def item_to_json_object(item: Item) -> JsonObject:
    if isinstance(item, UserItem):
        return {"type": "user", "text": item.text}
    if isinstance(item, AssistantItem):
        value: JsonObject = {"type": "assistant", "text": item.text}
        if item.reasoning is not None:
            value["reasoning"] = item.reasoning
        return value
    if isinstance(item, ToolCallItem):
        return {
            "type": "tool_call",
            "tool_call_id": item.tool_call_id,
            "tool_name": item.tool_name,
            "arguments": item.arguments,
        }
    return {
        "type": "tool_result",
        "tool_call_id": item.tool_call_id,
        "tool_name": item.tool_name,
        "output": item.output,
    }


def _text(value: Mapping[str, object], key: str, *, optional: bool = False) -> str | None:
    field = value.get(key)
    if isinstance(field, str) or (optional and field is None):
        return field
    raise RunStateError(f"Stepwise item {value.get('type')!r}: {key!r} must be a string")


def _required(value: Mapping[str, object], key: str) -> str:
    field = value.get(key)
    if isinstance(field, str):
        return field
    raise RunStateError(f"Stepwise item {value.get('type')!r}: {key!r} must be a string")


def item_from_json_object(value: object) -> Item:
    """Reads one item.

    Raises:
        RunStateError: The value is not a Stepwise item.
    """
    if not isinstance(value, dict):
        raise RunStateError(f"a Stepwise item must be a JSON object, not {value!r}")
    kind = value.get("type")
    if kind == "user":
        return UserItem(text=_required(value, "text"))
    if kind == "assistant":
        return AssistantItem(
            text=_text(value, "text", optional=True),
            reasoning=_text(value, "reasoning", optional=True),
        )
    if kind == "tool_call":
        return ToolCallItem(
            tool_call_id=_required(value, "tool_call_id"),
            tool_name=_required(value, "tool_name"),
            arguments=_required(value, "arguments"),
        )
    if kind == "tool_result":
        return ToolResultItem(
            tool_call_id=_required(value, "tool_call_id"),
            tool_name=_required(value, "tool_name"),
            output=_required(value, "output"),
        )
    raise RunStateError(f"unknown Stepwise item type {kind!r}")


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def item_to_message(item: Item) -> FrameworkMessage:
    """The stored message of one item, with its display fields filled."""
    framework_item = _compact(item_to_json_object(item))
    if isinstance(item, UserItem):
        return FrameworkMessage(
            role=MessageRole.USER, framework_item=framework_item, text=item.text
        )
    if isinstance(item, AssistantItem):
        return FrameworkMessage(
            role=MessageRole.ASSISTANT, framework_item=framework_item, text=item.text
        )
    if isinstance(item, ToolCallItem):
        return FrameworkMessage(
            role=MessageRole.ASSISTANT,
            framework_item=framework_item,
            tool_call_id=item.tool_call_id,
            tool_name=item.tool_name,
            tool_arguments=item.arguments,
        )
    return FrameworkMessage(
        role=MessageRole.TOOL,
        framework_item=framework_item,
        tool_call_id=item.tool_call_id,
        tool_name=item.tool_name,
        tool_output=item.output,
    )


def _parse_item(framework_item: str) -> Item | None:
    """A Stepwise item from its JSON, or None for another runner's item."""
    try:
        return item_from_json_object(json.loads(framework_item))
    except (ValueError, RunStateError):
        return None


_parsed_item = functools.lru_cache(maxsize=_PARSED_ITEM_CACHE_SIZE)(_parse_item)
"""`_parse_item`, once per process for small items: every model call of a session
replays its whole history, and items are immutable."""


def item_from_message(message: AgentMessage) -> Item:
    """The item a stored message replays as.

    A message another runner stored (its `framework_item` is not a Stepwise item)
    replays from its display fields, so a session can switch to Stepwise.
    """
    text = message.framework_item
    parsed = _parsed_item(text) if len(text) <= _CACHED_ITEM_MAX_CHARS else _parse_item(text)
    if parsed is not None:
        return parsed
    if message.role == MessageRole.TOOL:
        return ToolResultItem(
            tool_call_id=message.tool_call_id or "",
            tool_name=message.tool_name or "",
            output=message.tool_output or "",
        )
    if message.role == MessageRole.ASSISTANT:
        if message.tool_call_id:
            return ToolCallItem(
                tool_call_id=message.tool_call_id,
                tool_name=message.tool_name or "",
                arguments=message.tool_arguments or "{}",
            )
        return AssistantItem(text=message.text)
    return UserItem(text=message.text or "")


def items_to_model_messages(items: Iterable[Item]) -> list[ModelMessage]:
    """Joins each response's assistant and tool-call items into one `AssistantMessage`."""
    out: list[ModelMessage] = []
    open_text: str | None = None
    open_reasoning: str | None = None
    open_calls: list[ModelToolCall] = []
    is_open = False

    def close() -> None:
        nonlocal is_open, open_text, open_reasoning
        if is_open:
            out.append(
                AssistantMessage(
                    text=open_text, reasoning=open_reasoning, tool_calls=tuple(open_calls)
                )
            )
        is_open = False
        open_text = open_reasoning = None
        open_calls.clear()

    for item in items:
        if isinstance(item, AssistantItem):
            close()
            is_open = True
            open_text, open_reasoning = item.text, item.reasoning
        elif isinstance(item, ToolCallItem):
            is_open = True
            open_calls.append(item)
        elif isinstance(item, UserItem):
            close()
            out.append(UserMessage(text=item.text))
        else:
            close()
            out.append(
                ToolResultMessage(
                    tool_call_id=item.tool_call_id, tool_name=item.tool_name, output=item.output
                )
            )
    close()
    return out
