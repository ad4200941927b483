"""Context compaction: RunModel's compaction decision and the CompactContext Step.

Also builds the per-movement options that load only the AgentMessageChunks
instances a Step reads: the chunks after the summary for RunModel (and any Step
that hands the runner a turn context), and the summarized chunks for CompactContext.
"""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import Any

from dex import (
    AsyncContext,
    AttributeMapLoad,
    Context,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    dead_end,
    go_to_many,
)
from dex_agents_contracts import (
    AgentState,
    AgentStatus,
    CompactContextInput,
    CompactionFinishedPayload,
    CompactionStartedPayload,
    ContextSummary,
)

from dex_agents._messages import chunk_ranges_between
from dex_agents._runtime import SessionRuntime
from dex_agents._schema import sequence_key
from dex_agents._step_options import LOAD_MESSAGES_AND_CHUNKS, MODEL_RETRY, sync_options
from dex_agents._time import utc_now
from dex_agents.errors import AgentSessionRunError
from dex_agents.runner import AgentTurnContext, ContextCompactionRunner, ContextSummaryRequest

__all__ = [
    "BLANK_SUMMARY_ERROR",
    "BlankSummaryError",
    "CompactContext",
    "apply_turn_control_movement",
    "compaction_decision",
    "narrowed_to_summary",
    "run_model_movement",
]

_log = logging.getLogger("dex_agents")

BLANK_SUMMARY_ERROR = "dex-agents: summarize_context returned a blank summary"


class BlankSummaryError(AgentSessionRunError):
    """summarize_context returned no text: the attempt fails, and a retry asks again."""


# --- load options ------------------------------------------------------------------


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
    """`base` loading only the chunks after the summary instead of the whole chunk map.

    For movements into RunModel and ApplyTurnControl: the chunks the summary covers
    are never read there, and retention may delete them.
    """
    return _with_chunks(
        runtime, base, _chunk_loads(runtime, context, _summarized_through(runtime, context))
    )


def run_model_movement(runtime: SessionRuntime, context: Context) -> StepMovement[Any]:
    """A movement into RunModel that loads only the chunks after the summary."""
    from dex_agents._steps_model import RunModel  # noqa: PLC0415 (cycle)

    options = narrowed_to_summary(runtime, context, RunModel(runtime).get_step_options())
    return StepMovement.of(RunModel, None, options=options)


def apply_turn_control_movement(runtime: SessionRuntime, context: Context) -> StepMovement[Any]:
    """A movement into ApplyTurnControl that loads only the chunks after the summary."""
    from dex_agents._steps_control import ApplyTurnControl  # noqa: PLC0415 (cycle)

    options = narrowed_to_summary(runtime, context, ApplyTurnControl(runtime).get_step_options())
    return StepMovement.of(ApplyTurnControl, None, options=options)


# --- RunModel's decision -------------------------------------------------------------


def compaction_decision(
    runtime: SessionRuntime, context: AsyncContext, state: AgentState, turn: AgentTurnContext
) -> StepDecision | None:
    """CompactContext instead of a model call, or None to make the call.

    Compacts only when the input reaches the policy's trigger and the runner's
    cutoff lies past the current summary, so RunModel and CompactContext cannot loop.
    """
    policy = runtime.options.compaction
    runner = runtime.runner
    if policy is None or not isinstance(runner, ContextCompactionRunner):
        return None
    if runner.estimate_input_tokens(turn) < policy.trigger_tokens:
        return None
    cutoff = runner.select_compaction_cutoff(turn, policy.retained_token_budget)
    summary = runtime.schema.context_summary.get(context)
    summarized = summary.last_sequence if summary is not None else 0
    if cutoff is None or cutoff <= summarized:
        return None
    if cutoff >= state.next_message_sequence:
        _log.warning(
            "session %s: select_compaction_cutoff returned %d, past the newest stored "
            "message %d; not compacting",
            context.flow_id,
            cutoff,
            state.next_message_sequence - 1,
        )
        return None
    state.status = AgentStatus.COMPACTING_CONTEXT
    runtime.schema.state.set(context, state)
    options = _with_chunks(
        runtime,
        CompactContext(runtime).get_step_options(),
        _chunk_loads(runtime, context, summarized, cutoff),
    )
    return go_to_many(
        StepMovement.of(
            CompactContext, CompactContextInput(through_sequence=cutoff), options=options
        )
    )


# --- the Step ------------------------------------------------------------------------


class CompactContext(Step[CompactContextInput | None]):
    """One summary call that folds the previous summary and older messages into a new one."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        from dex_agents._steps_model import RecordTurnFailure  # noqa: PLC0415 (cycle)

        # The whole chunk map only as a fallback: RunModel's movement lists the
        # summarized chunks instead.
        return sync_options(
            execute_load=LOAD_MESSAGES_AND_CHUNKS,
            execute_retry=MODEL_RETRY,
            execute_method_timeout=timedelta(minutes=15),
            heartbeat_timeout=timedelta(minutes=2),
        ).on_execute_failure_proceed_to(
            RecordTurnFailure, RecordTurnFailure(self._runtime).get_step_options()
        )

    async def execute(
        self, context: AsyncContext, input: CompactContextInput | None
    ) -> StepDecision:
        runtime = self._runtime
        runner = runtime.runner
        policy = runtime.options.compaction
        state = runtime.state(context)
        if (
            input is None
            or state is None
            or state.active_turn_id is None
            or state.status is not AgentStatus.COMPACTING_CONTEXT
            or policy is None
            or not isinstance(runner, ContextCompactionRunner)
        ):
            return dead_end()  # defensive: only RunModel moves here, for an active turn
        turn_id = state.active_turn_id
        through = input.through_sequence
        previous = runtime.schema.context_summary.get(context)
        after = previous.last_sequence if previous is not None else 0
        events = runtime.writer(context, turn_id)
        try:
            events.write(CompactionStartedPayload(through_sequence=through))

            result = await runner.summarize_context(
                ContextSummaryRequest(
                    flow_id=context.flow_id,
                    turn_id=turn_id,
                    attempt=context.attempt,
                    previous_summary=previous,
                    messages=tuple(runtime.store.read_range(context, after=after, through=through)),
                    through_sequence=through,
                    events=events,
                    heartbeat=context.heartbeat,
                    input_token_budget=policy.context_window_tokens,
                    session_settings=runtime.turn_settings(context, turn_id),
                )
            )
            text = result.text
            if not isinstance(text, str) or not text.strip():
                raise BlankSummaryError(BLANK_SUMMARY_ERROR, session_id=context.flow_id)
            generation = (previous.generation if previous is not None else 0) + 1
            runtime.schema.context_summary.set(
                context,
                ContextSummary(
                    generation=generation,
                    first_sequence=1,
                    last_sequence=through,
                    text=text,
                    created_at=utc_now(),
                ),
            )
            runtime.record_usage(context, result.usage, events)
            runtime.store.retain(context, state.next_message_sequence, through)
            state.status = AgentStatus.RUNNING_MODEL
            runtime.schema.state.set(context, state)
            events.write(CompactionFinishedPayload(generation=generation, through_sequence=through))
        finally:
            events.close()
        # Reads see this Step's own writes: the new summary decides RunModel's chunks.
        return go_to_many(run_model_movement(runtime, context))
