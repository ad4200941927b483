"""Decisions whose movement carries options: the chunk loads and PollToolTask's route.

A Step declares loading the whole AgentMessageChunks map; a movement into a
Step that hands the runner a turn context (RunModel, ApplyTurnControl) lists
only the chunks after the summary instead, and one into CompactContext only
the chunks it summarizes. Retention may delete summarized chunks, and the
others are never read there. PollToolTask's failure route follows the call's
effect, so every movement into it carries its options.
"""

from __future__ import annotations

from dataclasses import replace

from dex import AttributeMapLoad, Context, StepDecision, StepMovement, StepOptions, go_to_many
from dex_agents_contracts import AgentToolCall, CompactContextInput

from dex_agents.runner import ContextCompactionRunner
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import sequence_key
from dex_agents.session._step_options import (
    LOAD_MESSAGES_AND_CHUNKS,
    LOAD_TOOL_CALLS,
    apply_turn_control_options,
    model_call_options,
    poll_options,
)
from dex_agents.session._step_table import SessionSteps
from dex_agents.session._stores.messages import chunk_ranges_between

__all__ = [
    "go_to_apply_turn_control",
    "go_to_compact_context",
    "go_to_poll",
    "go_to_run_model",
    "narrowed_to_summary",
    "run_model_options",
]


def run_model_options(steps: SessionSteps) -> StepOptions:
    return model_call_options(steps, (*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))


def _summarized_through(runtime: SessionRuntime, context: Context) -> int:
    """The last sequence the runner no longer sees; 0 for a runner that sees every message."""
    if not isinstance(runtime.runner, ContextCompactionRunner):
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
