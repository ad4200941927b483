"""AwaitTimer: the durable_wait built-in, a Dex Timer that survives restarts."""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta

from dex import (
    AsyncContext,
    Context,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Timer,
    Wait,
    dead_end,
    go_to,
)
from dex_agents_contracts import AgentToolCall, TimerStartedPayload, ToolCallStatus

from dex_agents._built_in_calls import parse_durable_wait
from dex_agents._event_writer import StepEventWriter
from dex_agents._runtime import SessionRuntime, ceil_seconds, utc_from
from dex_agents._step_options import LOAD_TOOL_CALLS, sync_options
from dex_agents._time import utc_now
from dex_agents._turn_control import abandon_waiting_record, cancellation_wake, turn_control_reason
from dex_agents.results import compact_json

__all__ = ["AwaitTimer", "durable_wait_result", "start_durable_wait"]


def start_durable_wait(
    runtime: SessionRuntime,
    context: Context,
    record: AgentToolCall,
    *,
    seconds: int,
    reason: str,
    events: StepEventWriter,
    now: datetime,
) -> StepMovement[str]:
    """RunModel's durable_wait call: waiting_for_timer until now + seconds."""
    record.status = ToolCallStatus.WAITING_FOR_TIMER
    record.wait_until = now + timedelta(seconds=seconds)
    runtime.schema.tool_calls.set(context, record.tool_call_id, record)
    events.write(
        TimerStartedPayload(
            tool_call_id=record.tool_call_id, wait_until=record.wait_until, reason=reason
        )
    )
    return StepMovement.of(AwaitTimer, record.tool_call_id)


def durable_wait_result(record: AgentToolCall) -> str:
    """The completed wait's result: the seconds it asked for, and its reason.

    The Timer is the authority, so a wait that SkipTimer ended reports the wait
    it was asked for; RunModel validated the arguments before the wait began.
    """
    arguments = parse_durable_wait(record.arguments, max_wait=timedelta.max)
    return compact_json(
        {"status": "completed", "waited_seconds": arguments.seconds, "reason": arguments.reason}
    )


class AwaitTimer(Step[str]):
    """Waits until wait_until, or until steering or cancel_turn wakes it."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        # WaitFor reads the record for wait_until.
        return dataclasses.replace(
            sync_options(execute_load=LOAD_TOOL_CALLS),
            wait_for_load_attribute_maps=LOAD_TOOL_CALLS,
        )

    async def wait_for(self, context: AsyncContext, input: str) -> Wait:
        schema = self._runtime.schema
        record = schema.tool_calls.get(context, input)
        until = utc_from(record.wait_until) if record is not None else None
        remaining = ceil_seconds(until, utc_now()) if until is not None else timedelta(0)
        # Timers come before Channels in the selection order, so a wait that ends
        # as a steer arrives completes normally.
        return Wait.any_of(Timer.by_duration(remaining), cancellation_wake(schema, input))

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        record = runtime.schema.tool_calls.get(context, input)
        if record is None or record.status is not ToolCallStatus.WAITING_FOR_TIMER:
            return dead_end()
        events = runtime.writer(context, record.turn_id)
        try:
            if context.has_timer_fired():
                record.status = ToolCallStatus.SUCCEEDED
                record.output = durable_wait_result(record)
                runtime.finalize_record(context, record, events)
                return dead_end()
            reason = turn_control_reason(runtime.schema, context, runtime.state(context))
            if reason is None:
                # A wake-up left from an earlier turn changes nothing.
                return go_to(AwaitTimer, input)
            abandon_waiting_record(runtime, context, record, reason, events, remove_interrupt=False)
            return dead_end()
        finally:
            events.close()
