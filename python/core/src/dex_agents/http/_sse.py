"""Server-Sent Events framing shared by the plain event stream and the UI stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.background import BackgroundTask

from dex_agents.http._limits import HttpLimits

__all__ = ["compact_json", "sse_response"]


def compact_json(value: object) -> str:
    """JSON as both languages write it for the wire: compact, UTF-8, no NaN."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def sse_response(
    events: AsyncIterator[ServerSentEvent],
    limits: HttpLimits,
    *,
    release: Callable[[], None],
    headers: dict[str, str] | None = None,
) -> EventSourceResponse:
    """A response that streams `events` after a `retry:` line, with pings between them.

    `\\n` separators, as the AI SDK writes them, keep the bytes equal to the golden
    vectors. `release` runs once the response is done, whether or not `events` was
    ever started.
    """

    async def framed() -> AsyncIterator[ServerSentEvent]:
        try:
            yield ServerSentEvent(retry=limits.retry_ms, sep="\n")
            async for event in events:
                yield event
        finally:
            release()

    return EventSourceResponse(
        framed(),
        headers={"Cache-Control": "no-cache", **(headers or {})},
        ping=limits.ping_seconds,
        sep="\n",
        ping_message_factory=lambda: ServerSentEvent(comment="ping", sep="\n"),
        send_timeout=limits.send_timeout_seconds,
        background=BackgroundTask(release),
    )
