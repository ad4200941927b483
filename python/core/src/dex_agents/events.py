"""The event writer runners and Steps use to append to the AgentEvents Stream."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["EventWriter"]


@runtime_checkable
class EventWriter(Protocol):
    """Appends one AgentEvent; safe to call from any thread.

    `payload` is a contract `*Payload` message (its type names the event, see
    `dex_agents_contracts.EVENT_PAYLOAD_TYPES`); adapter events pass their own
    prefixed `event_type` and a JSON object text instead.
    """

    def write(self, payload: object, *, event_type: str | None = None) -> None: ...

    def write_raw(self, event_type: str, payload_json: str) -> None: ...
