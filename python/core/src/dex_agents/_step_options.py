"""Step options the design document fixes; every Step sets SYNC on WaitFor and Execute."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dex import (
    AttributeLock,
    AttributeMap,
    Channel,
    ChannelMap,
    RetryPolicy,
    StepDurability,
    StepOptions,
)

from dex_agents._schema import (
    AGENT_MESSAGE_CHUNKS,
    AGENT_MESSAGES,
    AGENT_TOOL_CALLS,
    PENDING_INTERRUPTS,
    STEERED_USER_MESSAGES,
    TURN_CANCELLATION_REQUEST,
)

__all__ = [
    "LOAD_MESSAGES",
    "LOAD_MESSAGES_AND_CHUNKS",
    "LOAD_STEERED_MESSAGES",
    "LOAD_TOOL_CALLS",
    "LOCK_CANCELLATION",
    "LOCK_INTERRUPTS",
    "MODEL_RETRY",
    "SINGLE_ATTEMPT",
    "TOOL_RETRY",
    "sync_options",
]

LOAD_MESSAGES: tuple[AttributeMap[Any], ...] = (AGENT_MESSAGES,)
LOAD_MESSAGES_AND_CHUNKS: tuple[AttributeMap[Any], ...] = (AGENT_MESSAGES, AGENT_MESSAGE_CHUNKS)
LOAD_TOOL_CALLS: tuple[AttributeMap[Any], ...] = (AGENT_TOOL_CALLS,)
LOCK_INTERRUPTS: tuple[AttributeLock, ...] = (PENDING_INTERRUPTS.lock(),)
LOCK_CANCELLATION: tuple[AttributeLock, ...] = (TURN_CANCELLATION_REQUEST.lock(),)
LOAD_STEERED_MESSAGES: tuple[Channel[Any], ...] = (STEERED_USER_MESSAGES,)
"""The steered flag reads SteeredUserMessages, so a Step deciding on it loads them."""

MODEL_RETRY = RetryPolicy(maximum_attempts=3, total_duration=timedelta(minutes=30))
TOOL_RETRY = RetryPolicy(maximum_attempts=3)
SINGLE_ATTEMPT = RetryPolicy(maximum_attempts=1)


def sync_options(
    *,
    execute_load: tuple[AttributeMap[Any], ...] = (),
    execute_locks: tuple[AttributeLock, ...] = (),
    execute_channels: tuple[Channel[Any], ...] = (),
    execute_channel_maps: tuple[ChannelMap[Any], ...] = (),
    execute_retry: RetryPolicy | None = None,
    execute_method_timeout: timedelta | None = None,
    heartbeat_timeout: timedelta | None = None,
) -> StepOptions:
    """StepOptions with SYNC durability on both methods, so an ASYNC default never applies."""
    return StepOptions(
        wait_for_durability=StepDurability.SYNC,
        execute_durability=StepDurability.SYNC,
        execute_load_attribute_maps=execute_load,
        execute_lock_attributes=execute_locks,
        execute_load_channels=execute_channels,
        execute_load_channel_maps=execute_channel_maps,
        execute_retry=execute_retry,
        execute_method_timeout=execute_method_timeout,
        heartbeat_timeout=heartbeat_timeout,
    )
