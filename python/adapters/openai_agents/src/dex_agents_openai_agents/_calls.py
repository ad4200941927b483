"""What runs around a model call or a tool call inside its Step: heartbeats and deltas.

Dex fails an attempt after two minutes without a heartbeat, and the SDK does not
heartbeat, so the runner does it on a timer. Streaming turns the Responses
events of the model call into the session's `text_delta` / `reasoning_delta`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from agents import RawResponsesStreamEvent, StreamEvent
from dex_agents.runner import EventWriter, Heartbeat
from dex_agents_contracts import ReasoningDeltaPayload, TextDeltaPayload

__all__ = ["heartbeats", "write_delta"]

_logger = logging.getLogger(__name__)

_TEXT_DELTA = "response.output_text.delta"
_REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")


@contextlib.asynccontextmanager
async def heartbeats(heartbeat: Heartbeat, interval: float) -> AsyncIterator[None]:
    """Heartbeats every `interval` seconds while the body runs.

    A failed heartbeat only stops the heartbeats: the call itself decides the Step.
    """

    async def beat() -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await heartbeat()
            except Exception:
                _logger.warning("heartbeat failed; no more heartbeats this call", exc_info=True)
                return

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def write_delta(event: StreamEvent, events: EventWriter) -> None:
    """Writes a streamed text or reasoning delta of the model call as a session event."""
    if not isinstance(event, RawResponsesStreamEvent):
        return
    data = event.data
    delta = getattr(data, "delta", None)
    if not isinstance(delta, str) or not delta:
        return
    if data.type == _TEXT_DELTA:
        events.write(TextDeltaPayload(text=delta))
    elif data.type in _REASONING_DELTAS:
        events.write(ReasoningDeltaPayload(text=delta))
