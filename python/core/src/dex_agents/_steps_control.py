"""ApplyTurnControl and FinishTurnCancellation: how a steered or cancelled turn ends.

ApplyTurnControl is the only consumer of SteeredUserMessages; it ends a turn
whose records are all final and starts the steered one. FinishTurnCancellation
runs after cancel_turn commits and settles the records whose waiting Steps the
RPC cancelled, deciding only from committed state.
"""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

from dex import (
    AsyncContext,
    RetryPolicy,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Wait,
    dead_end,
    go_to,
    go_to_many,
)
from dex_agents_contracts import AgentStatus, AgentToolCall, CancellationReason, ToolCallStatus

from dex_agents._compaction import apply_turn_control_movement, run_model_movement
from dex_agents._event_writer import StepEventWriter
from dex_agents._runtime import SessionRuntime
from dex_agents._schema import MAX_CHANNEL_COUNT
from dex_agents._step_options import (
    LOAD_MESSAGES_AND_CHUNKS,
    LOAD_TOOL_CALLS,
    LOCK_CANCELLATION,
    LOCK_INTERRUPTS,
    sync_options,
)
from dex_agents._turn_control import (
    abandon_waiting_record,
    abandons_waiting,
    end_controlled_turn,
    remove_pending_interrupts,
    turn_cancelled,
)
from dex_agents.results import is_final

__all__ = ["RECOVERY_RETRY", "ApplyTurnControl", "FinishTurnCancellation"]

RECOVERY_RETRY = RetryPolicy(maximum_attempts=3)
"""Short bookkeeping Steps retry a lost Worker; they call no model and no tool."""


class ApplyTurnControl(Step[None]):
    """Ends a steered or cancelled turn, then starts a turn with every steered message.

    Its wait is non-blocking: it consumes every steered message and stale wake-up
    at once. It locks TurnCancellationRequest, so no turn starts while cancel_turn
    decides.
    """

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS),
            execute_locks=LOCK_CANCELLATION,
            execute_retry=RECOVERY_RETRY,
        )

    async def wait_for(self, context: AsyncContext, input: None) -> Wait:
        schema = self._runtime.schema
        return Wait.all_of(
            schema.steered_user_messages.at_most(MAX_CHANNEL_COUNT),
            schema.turn_control_requests.at_most(MAX_CHANNEL_COUNT),
        )

    async def execute(self, context: AsyncContext, input: None) -> StepDecision:
        from dex_agents._steps_model import AwaitUserMessage  # noqa: PLC0415 - cycle

        runtime = self._runtime
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
            events = runtime.writer(context, state.active_turn_id)
            try:
                end_controlled_turn(
                    runtime, context, state, reason, events, steered_message_count=len(steered)
                )
            finally:
                events.close()
        if not steered:
            return go_to(AwaitUserMessage, None)
        if runtime.begin_turn(context, state, steered):
            return go_to_many(run_model_movement(runtime, context))
        return go_to(AwaitUserMessage, None)  # a steered message too large to store


class FinishTurnCancellation(Step[str]):
    """After cancel_turn: records every call whose waiting Step the RPC cancelled.

    It holds the locks cancel_turn takes, so it sees the RPC's commit and any
    answer that committed before it. ResumeTurn still waits for the results, and
    ends the turn through ApplyTurnControl once they are all in.
    """

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=LOAD_TOOL_CALLS,
            execute_locks=(*LOCK_CANCELLATION, *LOCK_INTERRUPTS),
            execute_retry=RECOVERY_RETRY,
        )

    async def execute(self, context: AsyncContext, input: str) -> StepDecision:
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
            return go_to_many(apply_turn_control_movement(runtime, context))
        movements: list[StepMovement[str]] = []
        events = runtime.writer(context, input)
        try:
            for record in runtime.turn_records(context, input):
                movement = self._settle(context, record, events)
                if movement is not None:
                    movements.append(movement)
        finally:
            events.close()
        return go_to_many(*movements) if movements else dead_end()

    def _settle(
        self, context: AsyncContext, record: AgentToolCall, events: StepEventWriter
    ) -> StepMovement[str] | None:
        """One record: rejected, back to its waiting Step, or on to CancelToolTask."""
        from dex_agents._steps_questions import AwaitQuestionAnswer  # noqa: PLC0415 - cycle
        from dex_agents._steps_tasks import CancelToolTask  # noqa: PLC0415 - cycle
        from dex_agents._steps_tools import AwaitToolApproval  # noqa: PLC0415 - cycle

        runtime = self._runtime
        if is_final(record.status) or record.status is ToolCallStatus.APPROVED:
            return None  # approved calls belong to their tool Steps
        reason = CancellationReason.TURN_CANCELLED
        if abandons_waiting(record):
            if self._answer_committed_first(context, record):
                target = (
                    AwaitToolApproval
                    if record.status is ToolCallStatus.AWAITING_APPROVAL
                    else AwaitQuestionAnswer
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
        return StepMovement.of(CancelToolTask, record.tool_call_id)

    def _answer_committed_first(self, context: AsyncContext, record: AgentToolCall) -> bool:
        """Whether the call's answer committed before cancel_turn: its interrupt is no
        longer pending, but its resolution still waits to be consumed."""
        from dex_agents._steps_questions import question_interrupt_id  # noqa: PLC0415 - cycle

        runtime = self._runtime
        if record.status is ToolCallStatus.WAITING_FOR_TIMER:
            return False
        interrupt_id = (
            record.tool_call_id
            if record.status is ToolCallStatus.AWAITING_APPROVAL
            else question_interrupt_id(runtime, record)
        )
        if any(i.interrupt_id == interrupt_id for i in runtime.interrupts(context)):
            return False
        return runtime.schema.interrupt_resolutions.size(context, interrupt_id) > 0
