"""Reading a session's AgentEvents in tests."""

from __future__ import annotations

from dex_agents import AgentSessionClient
from dex_agents_contracts import AgentEvent

__all__ = ["events_until"]


def events_until(
    client: AgentSessionClient,
    session_id: str,
    until_type: str,
    *,
    count: int = 1,
    deadline_seconds: float = 30.0,
) -> list[AgentEvent]:
    """The session's events from the oldest retained through the `count`-th of
    `until_type`; TimeoutError when it has not come within `deadline_seconds`."""
    seen: list[AgentEvent] = []
    remaining = count

    def done(event: AgentEvent) -> bool:
        nonlocal remaining
        if event.type == until_type:
            remaining -= 1
        return remaining <= 0

    for event, _ in client.follow_events(session_id, until=done, deadline_seconds=deadline_seconds):
        seen.append(event)
    return seen
