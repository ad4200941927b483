"""Pydantic AI messages <-> the session's stored messages.

Each stored message's `framework_item` is a Pydantic AI `ModelMessage` in
`ModelMessagesTypeAdapter`'s JSON form. A response with several tool calls, or a
request with several tool results, is stored as one message per call or result,
so every stored message has its own tool fields for display, like the other
runners' messages. The pieces stay exact: the first is the original message
with only its share of the parts, and each later piece carries the original's
fields plus a marker in `metadata` (which Pydantic AI never sends to a model).
Loading the history joins marked pieces back onto the message before them, so a
later turn replays exactly the messages Pydantic AI wrote. The text and tool
fields are a projection for display only; nothing reads them back.
A runner keeps one `DecodedItemCache` (`new_item_cache`), so a RunModel late in a
long session validates only the messages stored since the Worker last saw it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from dex_agents._runner.item_cache import DEFAULT_ITEM_CACHE_BYTES, DecodedItemCache
from dex_agents.runner import FrameworkItemError, FrameworkMessage
from dex_agents_contracts import AgentMessage, AgentUsage, MessageRole
from pydantic_ai import ModelMessagesTypeAdapter
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = [
    "PIECE_METADATA_KEY",
    "dump_messages",
    "history_from_stored",
    "load_messages",
    "new_item_cache",
    "to_framework_message",
    "to_framework_messages",
    "usage_of",
    "user_request",
]


PIECE_METADATA_KEY = "dex_agents_piece"
"""`metadata` key marking a stored piece that continues the message before it."""


def dump_messages(messages: Sequence[ModelMessage]) -> list[object]:
    """JSON-ready form of messages (a list of objects)."""
    dumped: list[object] = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    return dumped


def load_messages(data: object) -> list[ModelMessage]:
    """Messages from their `dump_messages` form."""
    return list(ModelMessagesTypeAdapter.validate_python(data))


def _item_text(message: ModelMessage) -> str:
    return json.dumps(dump_messages([message])[0], separators=(",", ":"))


def _decode_item(item: str) -> ModelMessage:
    return load_messages([json.loads(item)])[0]


def new_item_cache(max_bytes: int = DEFAULT_ITEM_CACHE_BYTES) -> DecodedItemCache[ModelMessage]:
    """A cache of decoded stored messages for one runner (one per Worker process)."""
    return DecodedItemCache(_decode_item, max_bytes=max_bytes)


def _load_item(
    item: str, *, sequence: int, cache: DecodedItemCache[ModelMessage] | None
) -> ModelMessage:
    try:
        return cache.decoded(item) if cache is not None else _decode_item(item)
    except ValueError as error:
        raise FrameworkItemError(
            f"stored message {sequence} is not a Pydantic AI message "
            f"(framework_item must be ModelMessagesTypeAdapter JSON): {error}"
        ) from error


def history_from_stored(
    messages: Iterable[AgentMessage], cache: DecodedItemCache[ModelMessage] | None = None
) -> list[ModelMessage]:
    """The Pydantic AI message history of the stored conversation, pieces joined."""
    history: list[ModelMessage] = []
    for stored in messages:
        message = _load_item(stored.framework_item, sequence=stored.sequence, cache=cache)
        metadata = message.metadata
        if not metadata or PIECE_METADATA_KEY not in metadata:
            history.append(message)
            continue
        previous = history[-1] if history else None
        if previous is not None and previous.kind == message.kind:
            history[-1] = _joined(previous, message)
        else:
            # The message's first piece is gone (retention deleted it): keep this one alone.
            rest = {k: v for k, v in metadata.items() if k != PIECE_METADATA_KEY}
            history.append(replace(message, metadata=rest or None))
    return history


def _joined(first: ModelMessage, piece: ModelMessage) -> ModelMessage:
    if isinstance(first, ModelRequest) and isinstance(piece, ModelRequest):
        return replace(first, parts=[*first.parts, *piece.parts])
    if isinstance(first, ModelResponse) and isinstance(piece, ModelResponse):
        return replace(first, parts=[*first.parts, *piece.parts])
    raise FrameworkItemError("a stored piece does not continue a message of its kind")


def _pieces(message: ModelMessage) -> list[ModelMessage]:
    """One piece per tool call (response) or tool result (request); see the module doc."""
    anchor = ToolCallPart if isinstance(message, ModelResponse) else ToolReturnPart
    # Each group is the parts before a call (or result) plus that call; parts after the
    # last call stay with it.
    groups: list[list[Any]] = [[]]
    anchored = False
    for part in message.parts:
        if anchored:
            groups.append([])
            anchored = False
        groups[-1].append(part)
        anchored = isinstance(part, anchor)
    while len(groups) > 1 and not any(isinstance(p, anchor) for p in groups[-1]):
        groups[-2].extend(groups.pop())
    if len(groups) == 1:
        return [message]
    pieces = [_with_parts(message, groups[0], message.metadata)]
    for index, group in enumerate(groups[1:], start=1):
        marked = {**(message.metadata or {}), PIECE_METADATA_KEY: index}
        pieces.append(_with_parts(message, group, marked))
    return pieces


def _with_parts(
    message: ModelMessage, parts: list[Any], metadata: dict[str, Any] | None
) -> ModelMessage:
    if isinstance(message, ModelRequest):
        return replace(message, parts=parts, metadata=metadata)
    return replace(message, parts=parts, metadata=metadata)


def user_request(text: str) -> ModelRequest:
    return ModelRequest(parts=[UserPromptPart(content=text)])


def _user_text(part: UserPromptPart) -> str:
    if isinstance(part.content, str):
        return part.content
    return "".join(item for item in part.content if isinstance(item, str))


def _request_message(message: ModelRequest, item: str) -> FrameworkMessage:
    prompts = [p for p in message.parts if isinstance(p, UserPromptPart)]
    if prompts:
        return FrameworkMessage(
            role=MessageRole.USER,
            framework_item=item,
            text="\n".join(_user_text(p) for p in prompts),
        )
    results = [p for p in message.parts if isinstance(p, ToolReturnPart)]
    if len(results) == 1:
        result = results[0]
        return FrameworkMessage(
            role=MessageRole.TOOL,
            framework_item=item,
            tool_call_id=result.tool_call_id,
            tool_name=result.tool_name,
            tool_output=result.model_response_str(),
        )
    if results:
        lines = [f"{p.tool_name}: {p.model_response_str()}" for p in results]
        return FrameworkMessage(role=MessageRole.TOOL, framework_item=item, text="\n".join(lines))
    # Framework feedback with no call to answer (an output retry): the model reads it as
    # a user turn, so it is stored as one.
    feedback = [p.model_response() for p in message.parts if isinstance(p, RetryFeedbackPart)]
    return FrameworkMessage(
        role=MessageRole.USER, framework_item=item, text="\n".join(feedback) or None
    )


def _response_message(message: ModelResponse, item: str) -> FrameworkMessage:
    text = "".join(p.content for p in message.parts if isinstance(p, TextPart)) or None
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    if len(calls) != 1:
        return FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text=text)
    call = calls[0]
    return FrameworkMessage(
        role=MessageRole.ASSISTANT,
        framework_item=item,
        text=text,
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        tool_arguments=call.args_as_json_str(),
    )


def _framework_message(message: ModelMessage) -> FrameworkMessage:
    item = _item_text(message)
    if isinstance(message, ModelRequest):
        return _request_message(message, item)
    return _response_message(message, item)


def to_framework_message(message: ModelMessage) -> FrameworkMessage:
    """The stored form of a message that is stored whole (a user message)."""
    return _framework_message(message)


def to_framework_messages(messages: Iterable[ModelMessage]) -> list[FrameworkMessage]:
    """The stored form of messages: one per message, or per tool call or tool result."""
    return [_framework_message(piece) for m in messages for piece in _pieces(m)]


def usage_of(responses: Sequence[ModelResponse]) -> AgentUsage:
    """The session's usage record for the model calls that produced `responses`."""
    usage = AgentUsage(model_calls=len(responses))
    for response in responses:
        u = response.usage
        usage.input_tokens += u.input_tokens
        usage.output_tokens += u.output_tokens
        usage.cached_input_tokens += u.cache_read_tokens
        usage.reasoning_tokens += u.output_reasoning_tokens
    return usage
