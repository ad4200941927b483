"""CompactContext: one summary call that folds the previous summary and older messages
into a new one, then hands the turn back to RunModel."""

from __future__ import annotations

from dex import AsyncContext, StepDecision, StepOptions, dead_end
from dex_agents_contracts import (
    AgentStatus,
    AgentUsage,
    CompactContextInput,
    CompactionFinishedPayload,
    CompactionStartedPayload,
    ContextSummary,
)

from dex_agents._runner.capabilities import ContextSummaryRequest
from dex_agents.errors import AgentSessionRunError
from dex_agents.session._movements import go_to_run_model
from dex_agents.session._step_base import SessionStep
from dex_agents.session._step_options import LOAD_MESSAGES_AND_CHUNKS, model_call_options
from dex_agents.session._time import utc_now

__all__ = ["BLANK_SUMMARY_ERROR", "BlankSummaryError", "CompactContext"]

BLANK_SUMMARY_ERROR = "dex-agents: summarize_context returned a blank summary"


class BlankSummaryError(AgentSessionRunError):
    """summarize_context returned no text: the attempt fails, and a retry asks again."""


class CompactContext(SessionStep[CompactContextInput | None]):
    """One summary call; RunModel's movement lists the chunks it summarizes."""

    def get_step_options(self) -> StepOptions:
        # The whole chunk map only as a fallback: RunModel's movement lists the
        # summarized chunks instead.
        return model_call_options(self._runtime.steps, LOAD_MESSAGES_AND_CHUNKS)

    async def run(self, context: AsyncContext, input: CompactContextInput | None) -> StepDecision:
        runtime = self._runtime
        runner = runtime.declared.compaction_runner
        policy = runtime.options.compaction
        state = runtime.state(context)
        if (
            input is None
            or state is None
            or state.active_turn_id is None
            or state.status is not AgentStatus.COMPACTING_CONTEXT
            or policy is None
            or runner is None
        ):
            return dead_end()  # defensive: only RunModel moves here, for an active turn
        turn_id = state.active_turn_id
        through = input.through_sequence
        previous = runtime.schema.context_summary.get(context)
        after = previous.last_sequence if previous is not None else 0
        with runtime.writer(context, turn_id) as events:
            events.write(CompactionStartedPayload(through_sequence=through))

            model_call = runtime.tracing.model_call(runtime.activation_root(context), turn_id)
            with model_call:
                result = await runner.summarize_context(
                    ContextSummaryRequest(
                        flow_id=context.flow_id,
                        turn_id=turn_id,
                        attempt=context.attempt,
                        previous_summary=previous,
                        messages=tuple(
                            runtime.store.read_range(context, after=after, through=through)
                        ),
                        through_sequence=through,
                        events=events,
                        heartbeat=context.heartbeat,
                        input_token_budget=policy.context_window_tokens,
                        session_settings=runtime.turn_settings(context, turn_id),
                    )
                )
                model_call.outcome(
                    metadata=result.model_call_metadata,
                    usage=result.usage or AgentUsage(),
                    references={
                        "dex.agent.model_call.outcome": "context_summary",
                        "dex.agent.compaction.through_sequence": through,
                    },
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
            runtime.record_usage(context, result.usage or AgentUsage(), events)
            runtime.store.retain(context, state.next_message_sequence, through)
            state.status = AgentStatus.RUNNING_MODEL
            runtime.schema.state.set(context, state)
            events.write(CompactionFinishedPayload(generation=generation, through_sequence=through))
        # Reads see this Step's own writes: the new summary decides RunModel's chunks.
        return go_to_run_model(runtime, context)
