"""AwaitTimer: the durable_wait built-in, a Dex Timer that survives restarts.

RunModel starts the wait (`start_durable_wait` in the built-in rules); this Step
ends it when the Timer fires, or abandons it for steering or cancel_turn.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from dex import AsyncContext, StepDecision, StepOptions, Timer, Wait, dead_end, go_to
from dex_agents_contracts import AgentToolCall, ToolCallStatus

from dex_agents.results import compact_json
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._rules.built_in_calls import parse_durable_wait
from dex_agents.session._rules.turn_control import (
    abandon_waiting_record,
    cancellation_wake,
    turn_control_reason,
)
from dex_agents.session._step_base import WaitingRecordStep
from dex_agents.session._step_options import LOAD_TOOL_CALLS, sync_options
from dex_agents.session._time import ceil_seconds, utc_from, utc_now

__all__ = ["AwaitTimer", "durable_wait_result"]


def durable_wait_result(record: AgentToolCall) -> str:
    """The completed wait's result: the seconds it asked for, and its reason.

    The Timer is the authority, so a wait that SkipTimer ended reports the wait
    it was asked for; RunModel validated the arguments before the wait began.
    """
    arguments = parse_durable_wait(record.arguments, max_wait=timedelta.max)
    return compact_json(
        {"status": "completed", "waited_seconds": arguments.seconds, "reason": arguments.reason}
    )


class AwaitTimer(WaitingRecordStep):
    """Waits until wait_until, or until steering or cancel_turn wakes it."""

    record_status = ToolCallStatus.WAITING_FOR_TIMER

    def get_step_options(self) -> StepOptions:
        # WaitFor reads the record for wait_until.
        return dataclasses.replace(
            sync_options(execute_load=LOAD_TOOL_CALLS),
            wait_for_load_attribute_maps=LOAD_TOOL_CALLS,
        )

    async def wait(self, context: AsyncContext, input: str) -> Wait:
        schema = self._runtime.schema
        record = schema.tool_calls.get(context, input)
        until = utc_from(record.wait_until) if record is not None else None
        remaining = ceil_seconds(until, utc_now()) if until is not None else timedelta(0)
        # Timers come before Channels in the selection order, so a wait that ends
        # as a steer arrives completes normally.
        return Wait.any_of(Timer.by_duration(remaining), cancellation_wake(schema, input))

    async def decide(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepDecision:
        runtime = self._runtime
        if context.has_timer_fired():
            record.status = ToolCallStatus.SUCCEEDED
            record.output = durable_wait_result(record)
            runtime.finalize_record(context, record, events)
            return dead_end()
        reason = turn_control_reason(runtime.schema, context, runtime.state(context))
        if reason is None:
            # A wake-up left from an earlier turn changes nothing.
            return go_to(runtime.steps.await_timer, record.tool_call_id)
        abandon_waiting_record(runtime, context, record, reason, events, remove_interrupt=False)
        return dead_end()
