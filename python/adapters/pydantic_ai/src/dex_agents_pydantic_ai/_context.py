"""What a Pydantic AI tool or deps factory learns about the Dex Step it runs in.

The runner hands a tool its idempotency key through `RunContext.tool_call_metadata`
(the metadata Pydantic AI attaches to a resolved deferred call), so a tool needs
no Dex-specific deps type to read it; `deps_factory` gets the same record for
applications that prefer to thread it through their own deps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext

__all__ = ["DEX_METADATA_KEY", "DexRunInfo", "dex_run_info"]

DEX_METADATA_KEY = "dex_agents"
"""Key of the Dex record in `RunContext.tool_call_metadata` during a tool Step."""


@dataclass(frozen=True, kw_only=True)
class DexRunInfo:
    """The Dex Step a model call or tool call runs in."""

    flow_id: str
    """The session's Flow ID (the session ID)."""
    turn_id: str
    attempt: int
    """One-based attempt of the Step; a retried tool Step sees a higher number."""
    tool_call_id: str | None = None
    """Set in a tool Step only."""
    idempotency_key: str | None = None
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt; set in a tool Step only."""
    tool_source_reference: str | None = None
    """The call record's reference, for a tool a tool source made (MCP); tool Step only."""

    def to_metadata(self) -> dict[str, object]:
        return {
            "flow_id": self.flow_id,
            "turn_id": self.turn_id,
            "attempt": self.attempt,
            "tool_call_id": self.tool_call_id,
            "idempotency_key": self.idempotency_key,
            "tool_source_reference": self.tool_source_reference,
        }

    @classmethod
    def from_metadata(cls, data: object) -> DexRunInfo | None:
        if not isinstance(data, dict):
            return None
        flow_id, turn_id, attempt = data.get("flow_id"), data.get("turn_id"), data.get("attempt")
        if not (isinstance(flow_id, str) and isinstance(turn_id, str) and isinstance(attempt, int)):
            return None
        tool_call_id = data.get("tool_call_id")
        idempotency_key = data.get("idempotency_key")
        reference = data.get("tool_source_reference")
        return cls(
            flow_id=flow_id,
            turn_id=turn_id,
            attempt=attempt,
            tool_call_id=tool_call_id if isinstance(tool_call_id, str) else None,
            idempotency_key=idempotency_key if isinstance(idempotency_key, str) else None,
            tool_source_reference=reference if isinstance(reference, str) else None,
        )


def dex_run_info(ctx: RunContext[Any]) -> DexRunInfo | None:
    """The Dex tool Step a tool runs in, or None when it runs outside `PydanticAiRunner`.

    Call it from a tool that takes `RunContext`; use `idempotency_key` to make a
    write safe to repeat, because a read or idempotent_write Step may run again.
    """
    metadata = ctx.tool_call_metadata
    if not isinstance(metadata, dict):
        return None
    return DexRunInfo.from_metadata(metadata.get(DEX_METADATA_KEY))
