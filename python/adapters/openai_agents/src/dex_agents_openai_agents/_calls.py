"""Streaming a model call inside its Step: the Responses events of the call become
the session's `text_delta` / `reasoning_delta`."""

from __future__ import annotations

from agents import RawResponsesStreamEvent, StreamEvent
from dex_agents._runner.deltas import write_deltas
from dex_agents.events import EventWriter

__all__ = ["write_delta"]

_TEXT_DELTA = "response.output_text.delta"
_REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")


def write_delta(event: StreamEvent, events: EventWriter) -> None:
    """Writes a streamed text or reasoning delta of the model call as a session event."""
    if not isinstance(event, RawResponsesStreamEvent):
        return
    data = event.data
    delta = getattr(data, "delta", None)
    if not isinstance(delta, str):
        return
    if data.type == _TEXT_DELTA:
        write_deltas(events, text=delta)
    elif data.type in _REASONING_DELTAS:
        write_deltas(events, reasoning=delta)
