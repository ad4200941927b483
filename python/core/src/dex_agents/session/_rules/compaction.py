"""RunModel's compaction decision: summarize older messages instead of calling the model.

Compacts only when the input reaches the policy's trigger and the runner's
cutoff lies past the current summary, so RunModel and CompactContext cannot loop.
"""

from __future__ import annotations

import logging

from dex import AsyncContext, StepDecision
from dex_agents_contracts import AgentState, AgentStatus

from dex_agents._runner.awaitables import resolved
from dex_agents.runner import AgentTurnContext
from dex_agents.session._movements import go_to_compact_context
from dex_agents.session._runtime import SessionRuntime

__all__ = ["compaction_decision"]

_log = logging.getLogger("dex_agents")


async def compaction_decision(
    runtime: SessionRuntime, context: AsyncContext, state: AgentState, turn: AgentTurnContext
) -> StepDecision | None:
    """The movement into CompactContext instead of a model call, or None to make the call."""
    policy = runtime.options.compaction
    runner = runtime.declared.compaction_runner
    if policy is None or runner is None:
        return None
    if await resolved(runner.estimate_input_tokens(turn)) < policy.trigger_tokens:
        return None
    cutoff = await resolved(runner.select_compaction_cutoff(turn, policy.retained_token_budget))
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
    return go_to_compact_context(runtime, context, summarized, cutoff)
