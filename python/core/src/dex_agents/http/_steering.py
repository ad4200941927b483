"""Which turns steering started, read from the Stream for the snapshot route.

A steered turn's UI message goes on through the turn its steered messages start,
and stored messages do not say which turns those are: a `turn_steered` right
before a `turn_started` does. The snapshot route lists them so
convertAgentSnapshotToUIMessages can join the same turns the stream joins.
"""

from __future__ import annotations

from dex_agents.client import AgentSessionClient

__all__ = ["STEERED_TURNS_SCAN", "steered_turns"]

_PAGE = 256
STEERED_TURNS_SCAN = 4 * _PAGE
"""Newest events looked at; a steer older than that is not reported."""


def steered_turns(client: AgentSessionClient, session_id: str) -> list[str]:
    """Turn ids, oldest first, that steered messages started, among the newest events."""
    found: list[str] = []
    before = ""
    newer: str | None = None  # the turn_started just after the event at hand, if it was one
    for _ in range(STEERED_TURNS_SCAN // _PAGE):
        page = client.client.list_stream_messages(session_id, client.flow.events, _PAGE, before)
        for message in page.messages:
            event = message.value
            if event.type == "turn_steered" and newer is not None:
                found.append(newer)
            newer = event.turn_id if event.type == "turn_started" else None
        if not page.next_page_token:
            break
        before = page.next_page_token
    return found[::-1]
