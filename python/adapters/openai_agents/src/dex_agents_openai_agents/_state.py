"""The runner's framework run state: the SDK's `RunState` JSON plus what Dex needs.

`sdk_state` is `RunState.to_json()` as the SDK wrote it; the next RunModel hands
it to `RunState.from_json`, which also restores the current agent after a
handoff. `pending` lists the interruptions the session turned into tool calls,
and `items` the turn's input items so far, so a turn that ends without an answer
can store its transcript without reading the SDK's own format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PendingCall", "RunStateError", "TurnState"]

_VERSION = 1


class RunStateError(ValueError):
    """The framework run state cannot be read (another runner's state, or corrupt)."""


@dataclass(frozen=True, kw_only=True)
class PendingCall:
    tool_call_id: str
    tool_name: str


@dataclass(frozen=True, kw_only=True)
class TurnState:
    sdk_state: dict[str, Any]
    pending: list[PendingCall] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)

    def encode(self) -> str:
        return json.dumps(
            {
                "version": _VERSION,
                "sdk_state": self.sdk_state,
                "pending": [
                    {"tool_call_id": p.tool_call_id, "tool_name": p.tool_name} for p in self.pending
                ],
                "items": self.items,
            },
            separators=(",", ":"),
        )

    @classmethod
    def decode(cls, text: str | None) -> TurnState | None:
        if text is None:
            return None
        try:
            data = json.loads(text)
            if not isinstance(data, dict) or data.get("version") != _VERSION:
                raise RunStateError(
                    "the framework run state was not written by OpenAiAgentsRunner "
                    f"(state version {data.get('version') if isinstance(data, dict) else None!r}, "
                    f"expected {_VERSION})"
                )
            sdk_state = data["sdk_state"]
            if not isinstance(sdk_state, dict):
                raise RunStateError("the framework run state holds no SDK RunState object")
            return cls(
                sdk_state=sdk_state,
                pending=[
                    PendingCall(tool_call_id=str(p["tool_call_id"]), tool_name=str(p["tool_name"]))
                    for p in data["pending"]
                ],
                items=[dict(item) for item in data["items"]],
            )
        except RunStateError:
            raise
        except (ValueError, KeyError, TypeError) as error:
            raise RunStateError(f"unreadable OpenAI Agents run state: {error}") from error
