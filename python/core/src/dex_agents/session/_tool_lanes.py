"""Lanes: at most `max_tool_calls_in_flight` tool Steps of one model response at once.

RunModel deals the response's plain tool calls (no approval, no built-in) into
that many lanes in deferral order, call i into lane i mod the bound. It starts
the first call of each lane and stores, for every other call, an entry in
NextToolCalls under its predecessor in the lane. When a lane's tool Step ends,
whatever its decision (a result, a question, a task, a cancellation, an early
end), or when its failure route does, the same commit deletes that entry and
starts the call it names. Each entry is read and deleted by one Step only, so
parallel tool Steps never write the same value and need no lock, and a call
that goes back to its tool Step later (after an answer) finds no entry and
starts nothing.

Every lane call's record is approved, and only its own tool Step or that
Step's failure route makes it final, so a turn cannot end while a lane still
has calls to start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from dex import AttributeMapNotLoadedError, Context, StepDecision, StepMovement
from dex.step import DecisionKind
from dex_agents_contracts import AgentToolCall, ToolCallDeferredPayload

from dex_agents.session._movements import tool_step_movement
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import next_tool_call_key

__all__ = ["hand_over", "plan_lanes"]


def plan_lanes(
    runtime: SessionRuntime, context: Context, turn_id: str, calls: Sequence[AgentToolCall]
) -> list[StepMovement[str]]:
    """Stores the lanes of `calls` (in deferral order); returns the movements that start them."""
    width = runtime.options.max_tool_calls_in_flight
    lanes = runtime.schema.next_tool_calls
    for earlier, later in zip(calls, calls[width:], strict=False):
        lanes.set(
            context,
            next_tool_call_key(turn_id, earlier.tool_call_id),
            ToolCallDeferredPayload(
                tool_call_id=later.tool_call_id,
                tool_name=later.tool_name,
                effect=later.effect,
                requires_approval=later.requires_approval,
            ),
        )
    return [
        tool_step_movement(runtime.steps, runtime.schema, turn_id, call.tool_call_id, call.effect)
        for call in calls[:width]
    ]


def hand_over(
    runtime: SessionRuntime, context: Context, tool_call_id: str, decision: StepDecision
) -> StepDecision:
    """`decision` plus the start of the next call in this call's lane, if one waits.

    A Step moved here without the NextToolCalls load (a task's poll failing, a
    movement from before lanes) belongs to no lane and hands nothing over.
    """
    if decision.kind not in (DecisionKind.NEXT, DecisionKind.DEAD_END):
        return decision  # the session ends
    record: AgentToolCall | None = runtime.schema.tool_calls.get(context, tool_call_id)
    if record is None:  # the SDK reads an absent instance as None
        return decision
    key = next_tool_call_key(record.turn_id, tool_call_id)
    following = _lane_entry(runtime, context, key)
    if following is None:
        return decision
    runtime.schema.next_tool_calls.delete(context, key)
    movement = tool_step_movement(
        runtime.steps, runtime.schema, record.turn_id, following.tool_call_id, following.effect
    )
    return dataclasses.replace(
        decision, kind=DecisionKind.NEXT, movements=(*decision.movements, movement)
    )


def _lane_entry(
    runtime: SessionRuntime, context: Context, key: str
) -> ToolCallDeferredPayload | None:
    """The NextToolCalls entry, or None when absent or not loaded (no lane's tool Step)."""
    try:
        return runtime.schema.next_tool_calls.get(context, key)
    except AttributeMapNotLoadedError:
        return None
