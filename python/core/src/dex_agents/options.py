"""Session options: message storage limits, tool policies and approval deadlines."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from dex_agents_contracts import ToolEffect

from dex_agents.errors import UserError
from dex_agents.runner import ToolPolicy

__all__ = [
    "DEFAULT_EVENT_STREAM_CAPACITY_BYTES",
    "MAX_FRAMEWORK_RUN_STATE_BYTES",
    "MAX_VALUE_BYTES",
    "MESSAGE_CHUNK_MAX_BYTES_LIMIT",
    "MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT",
    "MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT",
    "AgentSessionOptions",
]

MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT = 4
MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT = 8 * 1024 * 1024
MESSAGE_CHUNK_MAX_BYTES_LIMIT = 8 * 1024 * 1024
DEFAULT_EVENT_STREAM_CAPACITY_BYTES = 10 * 1024 * 1024
MAX_FRAMEWORK_RUN_STATE_BYTES = 2 * 1024 * 1024
"""Largest run state RunModel stores; larger fails with `ValueTooLarge` (`run state of`)."""
MAX_VALUE_BYTES = 2 * 1024 * 1024
"""Largest stored value a session assumes Dex accepts: dexlite's `--max-value-bytes` default."""


@dataclass(frozen=True, kw_only=True)
class AgentSessionOptions:
    """How one agent session Flow type stores messages and treats tools."""

    tool_policies: Mapping[str, ToolPolicy] = field(default_factory=dict)
    """Per tool name: effect and approval, overriding framework metadata and the default."""
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    """The effect of tools without a policy or framework metadata."""
    interrupt_deadline: timedelta | None = None
    """How long an approval waits before it is rejected; None waits forever."""
    message_window_size: int = 64
    """Newest messages kept one per AgentMessages instance before rollover."""
    message_chunk_size: int = 32
    """Messages per AgentMessageChunks instance."""
    message_chunk_max_bytes: int = 1024 * 1024
    """Encoded size at which a chunk closes (at most 8 MiB)."""
    max_framework_run_state_bytes: int = MAX_FRAMEWORK_RUN_STATE_BYTES
    """Largest FrameworkRunState RunModel stores before it fails the turn."""
    event_stream_capacity_bytes: int = DEFAULT_EVENT_STREAM_CAPACITY_BYTES
    """Byte budget of the AgentEvents Stream."""
    max_value_bytes: int = MAX_VALUE_BYTES
    """The server's values.maxValueBytes: a message whose first stored value would be larger
    is not stored; the Step storing a user message fails that turn instead (design "Message
    storage"), and any other Step fails its attempt with `ValueTooLarge`."""

    def __post_init__(self) -> None:
        if self.message_window_size < 1:
            raise UserError("`message_window_size` must be at least 1")
        if self.message_chunk_size < 1:
            raise UserError("`message_chunk_size` must be at least 1")
        if not 16 <= self.message_chunk_max_bytes <= MESSAGE_CHUNK_MAX_BYTES_LIMIT:
            raise UserError("`message_chunk_max_bytes` must be between 16 bytes and 8 MiB")
        if self.interrupt_deadline is not None and self.interrupt_deadline <= timedelta(0):
            raise UserError("`interrupt_deadline` must be positive")
        if self.max_value_bytes <= 0:
            raise UserError("`max_value_bytes` must be positive")
        if self.event_stream_capacity_bytes <= 0:
            raise UserError("`event_stream_capacity_bytes` must be positive")
        if self.default_tool_effect is ToolEffect.UNSPECIFIED:
            raise UserError("`default_tool_effect` must be a tool effect")
