"""The session Steps' options; every Step sets SYNC on WaitFor and Execute.

The options of Steps that other families move to (with options of their own,
or as a failure route) are built here once, so the movement and the Step's
`get_step_options` cannot drift apart.
"""

from __future__ import annotations

import dataclasses
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
from dex_agents_contracts import ToolEffect

from dex_agents.session._schema import (
    AGENT_MESSAGE_CHUNKS,
    AGENT_MESSAGES,
    AGENT_TOOL_CALLS,
    PENDING_INTERRUPTS,
    STEERED_USER_MESSAGES,
    TURN_CANCELLATION_REQUEST,
)
from dex_agents.session._step_table import SessionSteps

__all__ = [
    "LOAD_MESSAGES",
    "LOAD_MESSAGES_AND_CHUNKS",
    "LOAD_STEERED_MESSAGES",
    "LOAD_TOOL_CALLS",
    "LOCK_CANCELLATION",
    "LOCK_INTERRUPTS",
    "MODEL_RETRY",
    "RECOVERY_RETRY",
    "SINGLE_ATTEMPT",
    "TOOL_RETRY",
    "apply_turn_control_options",
    "model_call_options",
    "poll_options",
    "record_turn_failure_options",
    "sync_options",
    "tool_record_options",
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
RECOVERY_RETRY = RetryPolicy(maximum_attempts=0, maximum_interval=timedelta(seconds=30))
"""ApplyTurnControl and FinishTurnCancellation retry until the server's total duration
(4 hours by default), as the failure-route Steps do: they call no model and no tool and
decide from committed state, so another attempt is always safe, and no failure route
follows them, so giving up after a few lost Workers or server restarts would leave the
turn active for good (a steered message lost, a cancelled turn that never ends)."""


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


def tool_record_options() -> StepOptions:
    """A Step that reads and writes only tool call records (and failure routes to one)."""
    return sync_options(execute_load=LOAD_TOOL_CALLS)


def record_turn_failure_options() -> StepOptions:
    return sync_options(execute_load=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))


def model_call_options(
    steps: SessionSteps, execute_load: tuple[AttributeMap[Any], ...]
) -> StepOptions:
    """RunModel and CompactContext: one model call, failing over to RecordTurnFailure."""
    return sync_options(
        execute_load=execute_load,
        execute_retry=MODEL_RETRY,
        execute_method_timeout=timedelta(minutes=15),
        heartbeat_timeout=timedelta(minutes=2),
    ).on_execute_failure_proceed_to(steps.record_turn_failure, record_turn_failure_options())


def apply_turn_control_options() -> StepOptions:
    return sync_options(
        execute_load=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS),
        execute_locks=LOCK_CANCELLATION,
        execute_retry=RECOVERY_RETRY,
    )


def poll_options(steps: SessionSteps, effect: ToolEffect) -> StepOptions:
    """PollToolTask's options, whose failure route follows the call's effect."""
    options = dataclasses.replace(
        sync_options(execute_load=LOAD_TOOL_CALLS, execute_retry=TOOL_RETRY),
        wait_for_load_attribute_maps=LOAD_TOOL_CALLS,
    )
    return options.on_execute_failure_proceed_to(
        steps.failure_route_for(effect), tool_record_options()
    )
