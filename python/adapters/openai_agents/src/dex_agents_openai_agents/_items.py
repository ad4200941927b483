"""The SDK's input items as the session's stored messages, and back.

A run's history is a list of Responses input items (`RunResult.to_input_list()`):
plain JSON objects, one per user message, assistant message, function call and
function call output. Each item is stored as one message, its JSON as the
`framework_item`, so the next turn hands the SDK exactly what it produced.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agents import ModelResponse
from dex_agents._runner.item_cache import DecodedItemCache
from dex_agents.runner import FrameworkItemError, FrameworkMessage
from dex_agents_contracts import AgentMessage, AgentUsage, MessageRole

__all__ = [
    "history_from_stored",
    "new_item_cache",
    "to_framework_messages",
    "tool_output_item",
    "usage_of",
    "user_item",
]


def user_item(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def tool_output_item(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _decode(text: str) -> dict[str, Any]:
    try:
        item = json.loads(text)
    except ValueError as error:
        raise FrameworkItemError(f"a stored message is not JSON: {error}") from error
    if not isinstance(item, dict):
        raise FrameworkItemError("a stored message is not an input item (a JSON object)")
    return item


def new_item_cache(max_bytes: int) -> DecodedItemCache[dict[str, Any]]:
    """Decoded stored items; hits are deep copies, because the SDK may edit its input."""
    return DecodedItemCache(_decode, max_bytes=max_bytes, copy_item=copy.deepcopy)


def history_from_stored(
    messages: Sequence[AgentMessage], cache: DecodedItemCache[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The input items of the stored messages, oldest first."""
    return [cache.decoded(message.framework_item) for message in messages]


def _text_of(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        ]
        return "".join(parts) or None
    return None


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    return _text_of(output) or json.dumps(output, separators=(",", ":"))


def to_framework_messages(
    items: Iterable[Mapping[str, Any]], names: Mapping[str, str] | None = None
) -> list[FrameworkMessage]:
    """One stored message per input item; `names` maps earlier call IDs to tool names."""
    known = dict(names or {})
    messages: list[FrameworkMessage] = []
    for item in items:
        text = json.dumps(item, separators=(",", ":"))
        kind = item.get("type")
        if kind == "function_call":
            known[str(item.get("call_id"))] = str(item.get("name"))
            messages.append(
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    framework_item=text,
                    tool_call_id=str(item.get("call_id")),
                    tool_name=str(item.get("name")),
                    tool_arguments=str(item.get("arguments") or ""),
                )
            )
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            messages.append(
                FrameworkMessage(
                    role=MessageRole.TOOL,
                    framework_item=text,
                    tool_call_id=call_id,
                    tool_name=known.get(call_id),
                    tool_output=_output_text(item.get("output")),
                )
            )
        elif item.get("role") in ("user", "system", "developer"):
            messages.append(
                FrameworkMessage(
                    role=MessageRole.USER, framework_item=text, text=_text_of(item.get("content"))
                )
            )
        else:  # assistant messages, reasoning, hosted tool calls and their results
            messages.append(
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    framework_item=text,
                    text=_text_of(item.get("content")),
                )
            )
    return messages


def usage_of(responses: Sequence[ModelResponse]) -> AgentUsage:
    """The session's usage record for the model calls that produced `responses`."""
    usage = AgentUsage(model_calls=len(responses))
    for response in responses:
        u = response.usage
        usage.input_tokens += u.input_tokens
        usage.output_tokens += u.output_tokens
        usage.cached_input_tokens += u.input_tokens_details.cached_tokens or 0
        usage.reasoning_tokens += u.output_tokens_details.reasoning_tokens or 0
    return usage
