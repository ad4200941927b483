"""Streaming a model call inside its Step: Pydantic AI's part events become the
session's `text_delta` and `reasoning_delta` events."""

from __future__ import annotations

from typing import Any

from dex_agents._runner.deltas import write_deltas
from dex_agents.runner import AgentTurnContext
from pydantic_ai import ModelRequestNode
from pydantic_ai.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
)

__all__ = ["stream_model_call"]


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
            write_deltas(turn.events, text=text, reasoning=reasoning)
