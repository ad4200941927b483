"""Session options: message storage, tool policies, deadlines, built-ins, plan mode, compaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from dex_agents_contracts import ToolEffect

from dex_agents._runner.policies import BUILT_IN_TOOL_NAMES, BuiltInToolName, ToolPolicy
from dex_agents.errors import UserError

__all__ = [
    "DEFAULT_EVENT_STREAM_CAPACITY_BYTES",
    "DEFAULT_MAX_TOOL_CALLS_IN_FLIGHT",
    "MAX_FRAMEWORK_RUN_STATE_BYTES",
    "MAX_VALUE_BYTES",
    "MESSAGE_CHUNK_MAX_BYTES_LIMIT",
    "MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT",
    "MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT",
    "AgentSessionOptions",
    "CompactionPolicy",
]

MESSAGE_ROLLOVER_MAX_CHUNKS_PER_COMMIT = 4
MESSAGE_ROLLOVER_MAX_BYTES_PER_COMMIT = 8 * 1024 * 1024
MESSAGE_CHUNK_MAX_BYTES_LIMIT = 8 * 1024 * 1024
DEFAULT_EVENT_STREAM_CAPACITY_BYTES = 10 * 1024 * 1024
MAX_FRAMEWORK_RUN_STATE_BYTES = 2 * 1024 * 1024
"""Largest run state RunModel stores; larger fails with `ValueTooLarge` (`run state of`)."""
MAX_VALUE_BYTES = 2 * 1024 * 1024
"""Largest stored value a session assumes Dex accepts: dexlite's `--max-value-bytes` default."""
DEFAULT_MAX_TOOL_CALLS_IN_FLIGHT = 16
"""Half of `dex_agents.worker.DEFAULT_MAX_CONCURRENT_TASKS` (32; a test pins the relation,
which this module cannot import): a response with hundreds of calls keeps a Worker busy
without taking every slot from the other sessions it serves."""


@dataclass(frozen=True, kw_only=True)
class CompactionPolicy:
    """When RunModel summarizes older messages instead of sending them all.

    At `trigger_ratio` of `context_window_tokens` the runner picks a cutoff that
    keeps about `retained_ratio` of the window as unsummarized recent messages.
    """

    context_window_tokens: int
    trigger_ratio: float = 0.85
    retained_ratio: float = 0.3

    def __post_init__(self) -> None:
        if isinstance(self.context_window_tokens, bool) or self.context_window_tokens < 1:
            raise UserError("`context_window_tokens` must be a positive number of tokens")
        if not 0 < self.trigger_ratio <= 1:
            raise UserError("`trigger_ratio` must be greater than 0 and at most 1")
        if not 0 <= self.retained_ratio < self.trigger_ratio:
            raise UserError("`retained_ratio` must be at least 0 and below `trigger_ratio`")

    @property
    def trigger_tokens(self) -> int:
        """Estimated input tokens at which RunModel asks for a cutoff."""
        return int(self.context_window_tokens * self.trigger_ratio)

    @property
    def retained_token_budget(self) -> int:
        """Tokens of recent messages a cutoff keeps unsummarized."""
        return int(self.context_window_tokens * self.retained_ratio)


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
    built_in_tools: tuple[BuiltInToolName, ...] = ()
    """Built-ins the session runs itself (ask_user, durable_wait, write_todos); their
    names are reserved while enabled."""
    max_durable_wait: timedelta = timedelta(hours=24)
    """Longest durable_wait; a longer one fails as invalid arguments."""
    plan_mode_enabled: bool = False
    """Planning turns and execute_plan; needs write_todos and a plan-mode runner."""
    compaction: CompactionPolicy | None = None
    """Summarize older messages near the context window; needs a compaction runner."""
    retained_message_limit: int | None = 1000
    """With compaction, newest messages always kept; older summarized chunks are deleted.
    None keeps every message."""
    max_tool_calls_in_flight: int = DEFAULT_MAX_TOOL_CALLS_IN_FLIGHT
    """Tool Steps (CallTool, CallSingleAttemptTool) one model response runs at once; each
    further call starts when an earlier one's tool Step ends. Approvals, questions and
    durable waits do not count: they wait without running anything."""

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
        for name in self.built_in_tools:
            if name not in BUILT_IN_TOOL_NAMES:
                raise UserError(
                    f"`built_in_tools`: {name!r} is not a built-in tool "
                    f"(one of {', '.join(BUILT_IN_TOOL_NAMES)})"
                )
        if len(set(self.built_in_tools)) != len(self.built_in_tools):
            raise UserError("`built_in_tools` names a built-in tool twice")
        if self.max_durable_wait < timedelta(seconds=1):
            raise UserError("`max_durable_wait` must be at least one second")
        if self.plan_mode_enabled and "write_todos" not in self.built_in_tools:
            raise UserError("`plan_mode_enabled` needs 'write_todos' in `built_in_tools`")
        if self.retained_message_limit is not None and self.retained_message_limit < 1:
            raise UserError("`retained_message_limit` must be at least 1, or None")
        if isinstance(self.max_tool_calls_in_flight, bool) or self.max_tool_calls_in_flight < 1:
            raise UserError("`max_tool_calls_in_flight` must be at least 1")
