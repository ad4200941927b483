"""Decisions whose movement carries options: the chunk loads, the tool Steps' loads,
PollToolTask's route.

A Step declares loading the whole AgentMessageChunks map; a movement into a
Step that hands the runner a turn context (RunModel, ApplyTurnControl) lists
only the chunks after the summary instead, and one into CompactContext only
the chunks it summarizes. Retention may delete summarized chunks, and the
others are never read there. A tool Step and its failure route load only the
call's own record and its NextToolCalls entry, not the turn's every record:
with hundreds of calls per response, loading them all in each call's Step
would make what a turn sends Workers, and what RunModel's commit prepares,
grow with the square of the count. PollToolTask's failure route follows the
call's effect, so every movement into it carries its options.
"""

from __future__ import annotations

from dataclasses import replace

from dex import AttributeMapLoad, Context, StepDecision, StepMovement, StepOptions, go_to_many
from dex_agents_contracts import AgentToolCall, CompactContextInput, ToolEffect

from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import SessionSchema, next_tool_call_key, sequence_key
from dex_agents.session._step_options import (
    LOAD_MESSAGES_AND_CHUNKS,
    LOAD_TOOL_CALLS,
    SINGLE_ATTEMPT,
    TOOL_RETRY,
    apply_turn_control_options,
    model_call_options,
    poll_options,
    sync_options,
)
from dex_agents.session._step_table import SessionSteps, retried
from dex_agents.session._stores.messages import chunk_ranges_between

__all__ = [
    "go_to_apply_turn_control",
    "go_to_compact_context",
    "go_to_poll",
    "go_to_run_model",
    "go_to_tool_step",
    "narrowed_to_summary",
    "run_model_options",
    "tool_step_movement",
]


def run_model_options(steps: SessionSteps) -> StepOptions:
    return model_call_options(steps, (*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))


def _summarized_through(runtime: SessionRuntime, context: Context) -> int:
    """The last sequence the runner no longer sees; 0 for a runner that sees every message."""
    if runtime.declared.compaction_runner is None:
        return 0
    summary = runtime.schema.context_summary.get(context)
    return summary.last_sequence if summary is not None else 0


def _chunk_loads(
    runtime: SessionRuntime, context: Context, after: int, through: int | None = None
) -> tuple[AttributeMapLoad, ...]:
    index = runtime.store.index(context)
    if index is None:
        return ()
    return tuple(
        runtime.schema.message_chunks.load(sequence_key(r.first_sequence))
        for r in chunk_ranges_between(index, after, through)
    )


def _with_chunks(
    runtime: SessionRuntime, base: StepOptions, loads: tuple[AttributeMapLoad, ...]
) -> StepOptions:
    chunks = runtime.schema.message_chunks
    maps = tuple(m for m in base.execute_load_attribute_maps if m is not chunks)
    if len(maps) == len(base.execute_load_attribute_maps):
        return base  # the Step loads no chunks at all
    return replace(
        base,
        execute_load_attribute_maps=maps,
        execute_load_attribute_map_instances=(*base.execute_load_attribute_map_instances, *loads),
    )


def narrowed_to_summary(
    runtime: SessionRuntime, context: Context, base: StepOptions
) -> StepOptions:
    """`base` loading only the chunks after the summary instead of the whole chunk map."""
    return _with_chunks(
        runtime, base, _chunk_loads(runtime, context, _summarized_through(runtime, context))
    )


def go_to_run_model(runtime: SessionRuntime, context: Context) -> StepDecision:
    """On to RunModel, loading only the chunks after the summary."""
    options = narrowed_to_summary(runtime, context, run_model_options(runtime.steps))
    return go_to_many(StepMovement.of(runtime.steps.run_model, None, options=options))


def go_to_apply_turn_control(runtime: SessionRuntime, context: Context) -> StepDecision:
    """On to ApplyTurnControl, loading only the chunks after the summary."""
    options = narrowed_to_summary(runtime, context, apply_turn_control_options())
    return go_to_many(StepMovement.of(runtime.steps.apply_turn_control, None, options=options))


def go_to_compact_context(
    runtime: SessionRuntime, context: Context, summarized: int, cutoff: int
) -> StepDecision:
    """On to CompactContext, loading the chunks it folds into the summary."""
    options = _with_chunks(
        runtime,
        model_call_options(runtime.steps, LOAD_MESSAGES_AND_CHUNKS),
        _chunk_loads(runtime, context, summarized, cutoff),
    )
    return go_to_many(
        StepMovement.of(
            runtime.steps.compact_context,
            CompactContextInput(through_sequence=cutoff),
            options=options,
        )
    )


def go_to_poll(steps: SessionSteps, record: AgentToolCall) -> StepDecision:
    """On to PollToolTask, whose failure route follows the call's effect."""
    return go_to_many(
        StepMovement.of(
            steps.poll_tool_task, record.tool_call_id, options=poll_options(steps, record.effect)
        )
    )


def _tool_step_options(
    steps: SessionSteps, schema: SessionSchema, turn_id: str, tool_call_id: str, effect: ToolEffect
) -> StepOptions:
    """The tool Step's own options, loading only what one call needs; its route's alike."""
    loads = (
        schema.tool_calls.load(tool_call_id),
        schema.next_tool_calls.load(next_tool_call_key(turn_id, tool_call_id)),
    )
    route = replace(sync_options(), execute_load_attribute_map_instances=loads)
    options = replace(
        sync_options(execute_retry=TOOL_RETRY if retried(effect) else SINGLE_ATTEMPT),
        execute_load_attribute_map_instances=loads,
    )
    return options.on_execute_failure_proceed_to(steps.failure_route_for(effect), route)


def tool_step_movement(
    steps: SessionSteps, schema: SessionSchema, turn_id: str, tool_call_id: str, effect: ToolEffect
) -> StepMovement[str]:
    """Into CallTool or CallSingleAttemptTool by the call's effect, with narrowed loads."""
    return StepMovement.of(
        steps.tool_step_for(effect),
        tool_call_id,
        options=_tool_step_options(steps, schema, turn_id, tool_call_id, effect),
    )


def go_to_tool_step(runtime: SessionRuntime, record: AgentToolCall) -> StepDecision:
    """On to the call's tool Step (after an approval or an answer), with narrowed loads."""
    return go_to_many(
        tool_step_movement(
            runtime.steps, runtime.schema, record.turn_id, record.tool_call_id, record.effect
        )
    )
