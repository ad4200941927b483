"""What runs around a model call or a tool call inside its Step: heartbeats and deltas.

Dex fails a RunModel attempt after two minutes without a heartbeat, and neither
the session nor Pydantic AI heartbeats during a long model call or tool, so the
runner does it on a timer. Streaming turns Pydantic AI's part events into the
session's `text_delta` and `reasoning_delta` events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from dex_agents.runner import AgentTurnContext, Heartbeat
from dex_agents_contracts import ReasoningDeltaPayload, TextDeltaPayload
from pydantic_ai import ModelRequestNode
from pydantic_ai.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)

__all__ = ["heartbeats", "stream_model_call"]

_logger = logging.getLogger(__name__)


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


async def stream_model_call(
    node: ModelRequestNode[Any, Any], ctx: Any, turn: AgentTurnContext
) -> None:
    """Runs the node's model call streamed, writing text and reasoning deltas as events."""
    async with node.stream(ctx) as stream:
        async for event in stream:
            text, reasoning = "", ""
            if isinstance(event, PartStartEvent):
                if isinstance(event.part, TextPart):
                    text = event.part.content
                elif isinstance(event.part, ThinkingPart):
                    reasoning = event.part.content
            elif isinstance(event, PartDeltaEvent):
                if isinstance(event.delta, TextPartDelta):
                    text = event.delta.content_delta
                elif isinstance(event.delta, ThinkingPartDelta):
                    reasoning = event.delta.content_delta or ""
            if text:
                turn.events.write(TextDeltaPayload(text=text))
            if reasoning:
                turn.events.write(ReasoningDeltaPayload(text=reasoning))
