"""Doubles for driving a runner without Dex: tests, benchmarks and adapter suites.

A runner's `run_model_step` and `execute_deferred_tool_call` take plain data
plus an event writer and heartbeat callbacks; these stand in for the callbacks
the session Flow passes, and `stored_message` turns a runner's
`FrameworkMessage` into the `AgentMessage` the session would store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from dex_agents_contracts import AgentMessage

from dex_agents.runner import FrameworkMessage

__all__ = [
    "NullEventWriter",
    "RecordingEventWriter",
    "no_checkpoint",
    "no_heartbeat",
    "stored_message",
]


@dataclass
class RecordingEventWriter:
    """An `EventWriter` that keeps `(event_type, payload)` pairs, in order.

    Contract payloads are kept as the message (named by their type unless
    `event_type` is given); raw adapter events as their parsed JSON.
    """

    events: list[tuple[str, object]] = field(default_factory=list)

    def write(self, payload: object, *, event_type: str | None = None) -> None:
        self.events.append((event_type or type(payload).__name__, payload))

    def write_raw(self, event_type: str, payload_json: str) -> None:
        self.events.append((event_type, json.loads(payload_json)))


class NullEventWriter:
    """An `EventWriter` that drops every event (benchmarks)."""

    def write(self, payload: object, *, event_type: str | None = None) -> None:
        return None

    def write_raw(self, event_type: str, payload_json: str) -> None:
        return None


async def no_heartbeat() -> None:
    """A heartbeat with nobody listening."""
    return None


async def no_checkpoint(_: str) -> None:
    """A `save_heartbeat_checkpoint` that keeps nothing."""
    return None


def stored_message(
    message: FrameworkMessage,
    sequence: int,
    turn_id: str,
    *,
    created_at: datetime | None = None,
) -> AgentMessage:
    """The `AgentMessage` the session stores for `message` at `sequence`."""
    return AgentMessage(
        sequence=sequence,
        turn_id=turn_id,
        role=message.message_role,
        text=message.text,
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        tool_arguments=message.tool_arguments,
        tool_output=message.tool_output,
        framework_item=message.framework_item,
        created_at=created_at if created_at is not None else datetime.now(UTC),
    )
