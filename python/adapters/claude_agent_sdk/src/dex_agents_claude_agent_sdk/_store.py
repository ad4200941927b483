"""A `SessionStore` for one RunModel: seeded from what Dex stored, collecting what the CLI adds.

The CLI resumes a session from the store (`resume=<session id>`), so the store
is the only copy of the transcript the CLI sees; it is rebuilt in every RunModel
from the stored messages and `FrameworkRunState`, and what the CLI mirrors into
it during the run becomes the next run state or the turn's messages. Nothing of
the session stays on the Worker's disk between Steps.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from claude_agent_sdk.types import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
)

from dex_agents_claude_agent_sdk._transcript import TranscriptEntry

__all__ = ["RunSessionStore"]


class RunSessionStore:
    """One session's transcript, keyed by subpath; other session IDs read as never written.

    Duck-typed, as the SDK probes a store's optional methods: it lists and deletes nothing.
    """

    def __init__(self, session_id: str, entries: Sequence[TranscriptEntry]) -> None:
        self.session_id = session_id
        self._entries: dict[str, list[dict[str, Any]]] = {}
        for subpath, entry in entries:
            self._entries.setdefault(subpath, []).append(entry)
        self.appended: list[TranscriptEntry] = []
        """What the CLI mirrored during this run, in order."""

    def _subpath(self, key: SessionKey | SessionListSubkeysKey) -> str | None:
        if key["session_id"] != self.session_id:
            return None
        return str(key.get("subpath") or "")

    async def append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        subpath = self._subpath(key)
        if subpath is None:
            raise ValueError(
                f"the CLI wrote session {key['session_id']!r}, not this session's "
                f"{self.session_id!r}; fork_session and continue_conversation are not supported"
            )
        for entry in entries:
            plain = copy.deepcopy(dict(entry))
            self._entries.setdefault(subpath, []).append(plain)
            self.appended.append((subpath, plain))

    async def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        subpath = self._subpath(key)
        if subpath is None or subpath not in self._entries:
            return None
        return [copy.deepcopy(e) for e in self._entries[subpath]]  # type: ignore[misc]

    async def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        if self._subpath(key) is None:
            return []
        return [s for s in self._entries if s]
