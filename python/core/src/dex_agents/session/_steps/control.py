"""ApplyTurnControl and FinishTurnCancellation: how a steered or cancelled turn ends.

ApplyTurnControl is the only consumer of SteeredUserMessages; it ends a turn
whose records are all final and starts the steered one. FinishTurnCancellation
runs after cancel_turn commits and settles the records whose waiting Steps the
RPC cancelled, deciding only from committed state.
"""

from __future__ import annotations

from dex import (
    AsyncContext,
    StepDecision,
    StepMovement,
    StepOptions,
    Wait,
    dead_end,
    go_to,
    go_to_many,
)
from dex_agents_contracts import AgentStatus, AgentToolCall, CancellationReason, ToolCallStatus

from dex_agents.results import is_final
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._movements import go_to_apply_turn_control, go_to_run_model
from dex_agents.session._rules.questions import question_interrupt_id
from dex_agents.session._rules.turn_control import (
    abandon_waiting_record,
    abandons_waiting,
    end_controlled_turn,
    remove_pending_interrupts,
    turn_cancelled,
)
from dex_agents.session._schema import MAX_CHANNEL_COUNT
from dex_agents.session._step_base import SessionStep, WaitingSessionStep
from dex_agents.session._step_options import (
    LOAD_TOOL_CALLS,
    LOCK_CANCELLATION,
    LOCK_INTERRUPTS,
    RECOVERY_RETRY,
    apply_turn_control_options,
    sync_options,
)

__all__ = ["ApplyTurnControl", "FinishTurnCancellation"]


class ApplyTurnControl(WaitingSessionStep[None]):
    """Ends a steered or cancelled turn, then starts a turn with every steered message.

    Its wait is non-blocking: it consumes every steered message and stale wake-up
    at once. It locks TurnCancellationRequest, so no turn starts while cancel_turn
    decides.
    """

    def get_step_options(self) -> StepOptions:
        return apply_turn_control_options()

    async def wait(self, context: AsyncContext, input: None) -> Wait:
        schema = self._runtime.schema
        return Wait.all_of(
            schema.steered_user_messages.at_most(MAX_CHANNEL_COUNT),
            schema.turn_control_requests.at_most(MAX_CHANNEL_COUNT),
        )

    async def run(self, context: AsyncContext, input: None) -> StepDecision:
        runtime = self._runtime
        await_user_message = runtime.steps.await_user_message
        state = runtime.state(context)
        if state is None:
            return dead_end()
        steered = list(runtime.schema.steered_user_messages.results(context))
        if state.active_turn_id is not None:
            if turn_cancelled(runtime.schema, context, state):
                reason = CancellationReason.TURN_CANCELLED
            elif steered:
                reason = CancellationReason.STEERED
            else:
                # A stale wake-up while the turn runs on: its own Steps still hold it.
                return dead_end()
            unfinished = [
                r
                for r in runtime.turn_records(context, state.active_turn_id)
                if not is_final(r.status)
            ]
            if unfinished:
                # Defensive: the turn ends only once ResumeTurn saw every result.
                return dead_end()
            with runtime.writer(context, state.active_turn_id) as events:
                await end_controlled_turn(
                    runtime, context, state, reason, events, steered_message_count=len(steered)
                )
        if not steered:
            return go_to(await_user_message, None)
        if await runtime.begin_turn(context, state, steered):
            return go_to_run_model(runtime, context)
        return go_to(await_user_message, None)  # a steered message too large to store


class FinishTurnCancellation(SessionStep[str]):
    """After cancel_turn: records every call whose waiting Step the RPC cancelled.

    It holds the locks cancel_turn takes, so it sees the RPC's commit and any
    answer that committed before it. ResumeTurn still waits for the results, and
    ends the turn through ApplyTurnControl once they are all in.
    """

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=LOAD_TOOL_CALLS,
            execute_locks=(*LOCK_CANCELLATION, *LOCK_INTERRUPTS),
            execute_retry=RECOVERY_RETRY,
        )

    async def run(self, context: AsyncContext, input: str) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if (
            state is None
            or state.active_turn_id != input
            or not turn_cancelled(runtime.schema, context, state)
        ):
            return dead_end()
        if state.status is not AgentStatus.RUNNING_TOOLS:
            # cancel_turn stopped the model call, the compaction or the failure route.
            return go_to_apply_turn_control(runtime, context)
        movements: list[StepMovement[str]] = []
        with runtime.writer(context, input) as events:
            for record in runtime.turn_records(context, input):
                movement = self._settle(context, record, events)
                if movement is not None:
                    movements.append(movement)
        return go_to_many(*movements) if movements else dead_end()

    def _settle(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepMovement[str] | None:
        """One record: rejected, back to its waiting Step, or on to CancelToolTask."""
        runtime = self._runtime
        steps = runtime.steps
        if is_final(record.status) or record.status is ToolCallStatus.APPROVED:
            return None  # approved calls belong to their tool Steps
        reason = CancellationReason.TURN_CANCELLED
        if abandons_waiting(record):
            if self._answer_committed_first(context, record):
                target = (
                    steps.await_tool_approval
                    if record.status is ToolCallStatus.AWAITING_APPROVAL
                    else steps.await_question_answer
                )
                return StepMovement.of(target, record.tool_call_id)
            abandon_waiting_record(runtime, context, record, reason, events)
            return None
        # A started task: it keeps waiting_for_task until CancelToolTask records it.
        if record.cancellation_reason == reason:
            return None  # already handed to CancelToolTask
        remove_pending_interrupts(runtime, context, record, reason, events)
        record.status = ToolCallStatus.WAITING_FOR_TASK
        record.cancellation_reason = reason
        runtime.schema.tool_calls.set(context, record.tool_call_id, record)
        return StepMovement.of(steps.cancel_tool_task, record.tool_call_id)

    def _answer_committed_first(self, context: AsyncContext, record: AgentToolCall) -> bool:
        """Whether the call's answer committed before cancel_turn: its interrupt is no
        longer pending, but its resolution still waits to be consumed."""
        runtime = self._runtime
        if record.status is ToolCallStatus.WAITING_FOR_TIMER:
            return False
        interrupt_id = (
            record.tool_call_id
            if record.status is ToolCallStatus.AWAITING_APPROVAL
            else question_interrupt_id(runtime, record)
        )
        if runtime.interrupt_store.find(context, interrupt_id) is not None:
            return False
        return runtime.schema.interrupt_resolutions.size(context, interrupt_id) > 0
