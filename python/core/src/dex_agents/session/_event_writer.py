"""The EventWriter Steps hand to runners: AgentEvents appends from any thread.

A Step opens one per attempt as `with runtime.writer(context, turn_id) as events:`;
leaving the block closes it, so a runner thread that writes late is dropped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading

from dex import AsyncContext, Stream
from dex_agents_contracts import EVENT_PAYLOAD_TYPES, AgentEvent, encode

from dex_agents._closing import Closing

__all__ = ["StepEventWriter", "event_type_of"]

_log = logging.getLogger(__name__)

_TYPE_BY_PAYLOAD: dict[type[object], str] = {
    payload_type: event_type for event_type, payload_type in EVENT_PAYLOAD_TYPES.items()
}


def event_type_of(payload: object) -> str:
    """The AgentEvent type a contract `*Payload` message is written as."""
    try:
        return _TYPE_BY_PAYLOAD[type(payload)]
    except KeyError:
        raise TypeError(
            f"{type(payload).__name__} is not an event payload; "
            "pass `event_type` for adapter events"
        ) from None


class StepEventWriter(Closing):
    """Writes AgentEvents for one Step attempt, tagged with its turn, execution and attempt.

    Stream writes belong to the Step's event loop; a call from another thread
    is handed to that loop, so runners may write from worker threads. Writes
    after the attempt finished are dropped: streams are best effort.
    """

    def __init__(
        self,
        stream: Stream[AgentEvent],
        context: AsyncContext,
        *,
        turn_id: str | None,
    ) -> None:
        self._stream = stream
        self._context = context
        self._turn_id = turn_id
        self._attempt = context.attempt
        self._step_execution_id = context.step_execution_id or ""
        self._loop = asyncio.get_running_loop()
        self._thread_id = threading.get_ident()
        self._closed = False
        self._lock = threading.Lock()

    def write(self, payload: object, *, event_type: str | None = None) -> None:
        """Append a contract payload message (or an adapter event with `event_type`)."""
        if event_type is None:
            # A contract payload encodes to a JSON object: no need to parse it back.
            self._write(event_type_of(payload), encode(payload))
        elif isinstance(payload, str):
            self.write_raw(event_type, payload)
        else:
            self.write_raw(event_type, encode(payload))

    def write_raw(self, event_type: str, payload_json: str) -> None:
        """Append an event whose payload is already JSON object text."""
        if not event_type:
            raise ValueError("an event needs a type")
        if not isinstance(json.loads(payload_json), dict):
            raise ValueError("an event payload must be a JSON object")
        self._write(event_type, payload_json)

    def _write(self, event_type: str, payload_json: str) -> None:
        event = AgentEvent(
            type=event_type,
            turn_id=self._turn_id,
            attempt=self._attempt,
            payload=payload_json,
            step_execution_id=self._step_execution_id,
        )
        if threading.get_ident() == self._thread_id:
            self._append(event)
        else:
            self._loop.call_soon_threadsafe(self._append, event)

    def close(self) -> None:
        """Drop later writes (the attempt is over)."""
        with self._lock:
            self._closed = True

    def _append(self, event: AgentEvent) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._stream.write(self._context, event)
            except Exception:  # best effort: an event never fails a Step
                _log.warning("dropped AgentEvent %s", event.type, exc_info=True)
