"""ADK session events <-> the session's stored messages.

Each stored message's `framework_item` is an ADK `Event` as
`Event.model_dump_json()` writes it. An event with several function calls or
function responses is stored as one message per call or response, so every
stored message has its own tool fields for display: the first piece is the
event with its share of the parts, each later piece the same event with the
next share plus a marker in `custom_metadata` (ADK never sends it to a model).
Loading joins marked pieces back onto the event before them, so a later turn
replays exactly the events ADK wrote. Events without content (ADK's
bookkeeping of a finished invocation) are not stored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dex_agents._runner.deltas import write_deltas
from dex_agents._runner.item_cache import DecodedItemCache
from dex_agents.events import EventWriter
from dex_agents.runner import FrameworkItemError, FrameworkMessage
from dex_agents_contracts import AgentMessage, AgentUsage, MessageRole
from google.adk.events import Event
from google.genai import types

__all__ = [
    "PIECE_KEY",
    "events_from_stored",
    "new_event_cache",
    "output_text",
    "to_framework_messages",
    "usage_of",
    "user_event",
    "write_partial",
]

PIECE_KEY = "io.superdurable.dex/piece"
"""`custom_metadata` key of an event piece that joins the stored message before it."""


def user_event(text: str) -> Event:
    return Event(
        author="user",
        invocation_id="",
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def _decode(text: str) -> Event:
    """A stored message's event; every stored event has an author and content."""
    try:
        event = Event.model_validate_json(text)
    except ValueError as error:
        raise FrameworkItemError(
            f"a stored message is not an ADK event (framework_item must be Event JSON): {error}"
        ) from error
    if not event.author or event.content is None:
        raise FrameworkItemError(
            "a stored message is not an ADK event (framework_item must be Event JSON "
            "with an author and content)"
        )
    return event


def new_event_cache(max_bytes: int) -> DecodedItemCache[Event]:
    """Decoded stored events; hits are copies, because ADK may edit the events it holds."""
    return DecodedItemCache(
        _decode, max_bytes=max_bytes, copy_item=lambda e: e.model_copy(deep=True)
    )


def events_from_stored(
    messages: Iterable[AgentMessage], cache: DecodedItemCache[Event]
) -> list[Event]:
    """The ADK events of the stored conversation, oldest first, pieces joined."""
    events: list[Event] = []
    for message in messages:
        event = cache.decoded(message.framework_item)
        metadata = dict(event.custom_metadata or {})
        if PIECE_KEY not in metadata:
            events.append(event)
            continue
        previous = events[-1] if events else None
        if previous is not None and previous.id == event.id and previous.content and event.content:
            previous.content.parts = [*(previous.content.parts or []), *(event.content.parts or [])]
        else:  # its first piece is gone (retention deleted it): keep this one alone
            metadata.pop(PIECE_KEY)
            event.custom_metadata = metadata or None
            events.append(event)
    return events


def _is_tool_part(part: types.Part) -> bool:
    return part.function_call is not None or part.function_response is not None


def _pieces(event: Event) -> list[Event]:
    """The event split so that each piece holds at most one function call or response."""
    parts = list(event.content.parts or []) if event.content else []
    groups: list[list[types.Part]] = []
    for part in parts:
        if not groups or (_is_tool_part(part) and any(_is_tool_part(p) for p in groups[-1])):
            groups.append([part])
        else:
            groups[-1].append(part)
    if len(groups) <= 1:
        return [event]
    pieces: list[Event] = []
    for index, group in enumerate(groups):
        assert event.content is not None
        piece = event.model_copy(deep=True)
        piece.content = types.Content(role=event.content.role, parts=group)
        if index:
            piece.custom_metadata = {**(event.custom_metadata or {}), PIECE_KEY: index}
        pieces.append(piece)
    return pieces


def output_text(response: Mapping[str, Any] | None) -> str:
    """What a stored tool message shows of a function response."""
    if not response:
        return ""
    if set(response) == {"result"} and isinstance(response["result"], str):
        return response["result"]
    return json.dumps(response, separators=(",", ":"), default=str)


def _message(piece: Event) -> FrameworkMessage:
    item = piece.model_dump_json(exclude_none=True)
    parts = list(piece.content.parts or []) if piece.content else []
    text = "".join(p.text for p in parts if p.text and not p.thought) or None
    for part in parts:
        call, response = part.function_call, part.function_response
        if call is not None:
            return FrameworkMessage(
                role=MessageRole.ASSISTANT,
                framework_item=item,
                text=text,
                tool_call_id=call.id,
                tool_name=call.name,
                tool_arguments=json.dumps(call.args or {}, separators=(",", ":")),
            )
        if response is not None:
            return FrameworkMessage(
                role=MessageRole.TOOL,
                framework_item=item,
                tool_call_id=response.id,
                tool_name=response.name,
                tool_output=output_text(response.response),
            )
    if piece.author == "user":
        return FrameworkMessage(role=MessageRole.USER, framework_item=item, text=text)
    return FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=item, text=text)


def to_framework_messages(events: Iterable[Event]) -> list[FrameworkMessage]:
    """One stored message per event piece; events without content are left out."""
    messages: list[FrameworkMessage] = []
    for event in events:
        if event.partial or not event.content or not event.content.parts:
            continue
        messages.extend(_message(piece) for piece in _pieces(event))
    return messages


def is_model_response(event: Event) -> bool:
    return bool(event.content and event.content.role == "model" and not event.partial)


def usage_of(events: Sequence[Event]) -> AgentUsage:
    """The session's usage record for the model responses among `events`."""
    usage = AgentUsage()
    for event in events:
        if not is_model_response(event):
            continue
        usage.model_calls += 1
        u = event.usage_metadata
        if u is None:
            continue
        usage.input_tokens += u.prompt_token_count or 0
        usage.output_tokens += (u.candidates_token_count or 0) + (u.thoughts_token_count or 0)
        usage.cached_input_tokens += u.cached_content_token_count or 0
        usage.reasoning_tokens += u.thoughts_token_count or 0
    return usage


def write_partial(event: Event, events: EventWriter) -> None:
    """A streamed (partial) event's text and thoughts, as the session's delta events."""
    for part in event.content.parts or [] if event.content else []:
        if part.thought:
            write_deltas(events, reasoning=part.text)
        else:
            write_deltas(events, text=part.text)
