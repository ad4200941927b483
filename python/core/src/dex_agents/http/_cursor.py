"""Reads a session's AgentEvents after a token, in batches when the reader is behind.

ReadStream returns one message per call (about 2 ms on loopback), so a reader
replaying a turn would pay one call per event. When the message just read is
older than `_BEHIND_SECONDS`, the reader is catching up: a newest-first listing
of the Stream (at most `_MAX_PAGES` pages, so a stream holds at most that many
messages) then yields the messages after it at once. A reader further behind
reads one by one and lists again after `_COOLDOWN_READS` reads. A live reader,
whose messages are fresh, never lists.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dex import LongPollTimeoutError, StreamMessage
from dex_agents_contracts import AgentEvent

from dex_agents.client import AgentSessionClient

__all__ = ["EventCursor"]

_BEHIND_SECONDS = 0.05
_PAGE = 256
_MAX_PAGES = 4
_COOLDOWN_READS = _PAGE * _MAX_PAGES // 2


class EventCursor:
    def __init__(self, client: AgentSessionClient, session_id: str, after: str) -> None:
        self.client = client
        self.session_id = session_id
        self.after = after
        self._cooldown = 0

    def next(self, wait: timedelta | None) -> list[StreamMessage[AgentEvent]]:
        """The next message or messages after `after` (advanced past them); [] on timeout."""
        try:
            first = self.client.read_event(self.session_id, self.after, wait)
        except LongPollTimeoutError:
            return []
        found = [first]
        age = datetime.now(UTC) - first.created_time
        if self._cooldown > 0:
            self._cooldown -= 1
        elif age.total_seconds() > _BEHIND_SECONDS:
            found += self._newer_than(first.resume_token)
        self.after = found[-1].resume_token
        return found

    def _newer_than(self, token: str) -> list[StreamMessage[AgentEvent]]:
        client = self.client
        pages: list[list[StreamMessage[AgentEvent]]] = []
        before = ""
        for _ in range(_MAX_PAGES):
            page = client.client.list_stream_messages(
                self.session_id, client.flow.events, _PAGE, before
            )
            tokens = [message.resume_token for message in page.messages]
            if token in tokens:
                pages.append(list(page.messages[: tokens.index(token)]))
                return [message for newer in reversed(pages) for message in reversed(newer)]
            pages.append(list(page.messages))
            if not page.next_page_token:
                break
            before = page.next_page_token
        self._cooldown = _COOLDOWN_READS  # too far behind (or trimmed meanwhile)
        return []
