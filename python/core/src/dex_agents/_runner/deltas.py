"""A streamed model call's pieces as the session's `text_delta` / `reasoning_delta` events.

Every framework streams its own shape (Responses events, part deltas, message
chunks, partial events); an adapter reads the text and the reasoning out of a
piece and hands them here, so which event carries which, and that an empty
piece writes nothing, is decided once.
"""

from __future__ import annotations

from dex_agents_contracts import ReasoningDeltaPayload, TextDeltaPayload

from dex_agents.events import EventWriter

__all__ = ["write_deltas"]


def write_deltas(
    events: EventWriter, *, text: str | None = None, reasoning: str | None = None
) -> None:
    """Writes the piece's reasoning, then its text, each only when it is not empty."""
    if reasoning:
        events.write(ReasoningDeltaPayload(text=reasoning))
    if text:
        events.write(TextDeltaPayload(text=text))
