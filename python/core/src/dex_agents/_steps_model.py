"""RunModel, ResumeTurn and RecordTurnFailure: one model call per Step, and the turn's end."""

# Async handlers take AsyncContext and return coroutines, which the SDK's sync
# Step signature cannot express; AsyncWorker accepts them (allow_async_handlers).
# mypy: disable-error-code="override"

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from dex import (
    AsyncContext,
    Step,
    StepDecision,
    StepMovement,
    StepOptions,
    Wait,
    dead_end,
    go_to,
    go_to_many,
)
from dex_agents_contracts import (
    AgentInterrupt,
    AgentState,
    AgentStatus,
    AgentToolCall,
    CompactContextInput,
    InterruptKind,
    InterruptRaisedPayload,
    ToolCallDeferredPayload,
)

from dex_agents._event_writer import StepEventWriter
from dex_agents._runtime import SessionRuntime, is_value_too_large_run_state
from dex_agents._step_options import (
    LOAD_MESSAGES,
    LOAD_MESSAGES_AND_CHUNKS,
    LOAD_TOOL_CALLS,
    LOCK_INTERRUPTS,
    MODEL_RETRY,
    sync_options,
)
from dex_agents._steps_tools import AwaitToolApproval, tool_step_for
from dex_agents._time import utc_now
from dex_agents.errors import ValueTooLarge
from dex_agents.results import is_final
from dex_agents.runner import (
    DeferredToolCall,
    ToolCallsRequested,
    TurnCompleted,
    TurnContinued,
    UnfinishedTurnMessageBuilder,
)

__all__ = [
    "INCREMENTAL_MESSAGES_NEED_BUILDER",
    "AwaitUserMessage",
    "RecordTurnFailure",
    "ResumeTurn",
    "RunModel",
    "invalid_tool_call_ids",
]

INCREMENTAL_MESSAGES_NEED_BUILDER = (
    "a runner that sets ToolCallsRequested.new_messages must implement "
    "build_unfinished_turn_messages"
)


def invalid_tool_call_ids(
    calls: Sequence[DeferredToolCall], earlier: Sequence[AgentToolCall]
) -> str | None:
    """Why the calls' IDs break the rule (non-empty, no `/`, unique in the turn), or None."""
    seen = {record.tool_call_id for record in earlier}
    for call in calls:
        if not isinstance(call.tool_call_id, str) or not call.tool_call_id:
            return "dex-agents: a tool call ID must not be empty"
        if "/" in call.tool_call_id:
            return f"dex-agents: tool call ID {call.tool_call_id!r} must not contain '/'"
        if call.tool_call_id in seen:
            return f"dex-agents: tool call ID {call.tool_call_id!r} is used twice in one turn"
        seen.add(call.tool_call_id)
    return None


class AwaitUserMessage(Step[None]):
    """Waits for a queued user message and starts a turn with it."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_MESSAGES)

    async def wait_for(self, context: AsyncContext, input: None) -> Wait:
        return Wait.until(self._runtime.schema.queued_user_messages.for_one())

    async def execute(self, context: AsyncContext, input: None) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        received = runtime.schema.queued_user_messages.results(context)
        if state is None or not received:
            return go_to(AwaitUserMessage, None)
        if state.active_turn_id is not None:
            # Defensive: never two turns at once; the message is lost otherwise.
            return dead_end()
        if not runtime.begin_turn(context, state, received[0].text):
            return go_to(AwaitUserMessage, None)  # the message was too large: the turn failed
        return go_to(RunModel, None)


class RunModel(Step[CompactContextInput | None]):
    """One model call through the runner; stores its outcome in one commit."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(
            execute_load=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS),
            execute_retry=MODEL_RETRY,
            execute_method_timeout=timedelta(minutes=15),
            heartbeat_timeout=timedelta(minutes=2),
        ).on_execute_failure_proceed_to(RecordTurnFailure, _record_turn_failure_options())

    async def execute(
        self, context: AsyncContext, input: CompactContextInput | None
    ) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if state is None or state.active_turn_id is None:
            return dead_end()
        turn_id = state.active_turn_id
        events = runtime.writer(context, turn_id)
        try:
            turn = runtime.turn_context(context, state, turn_id, events)
            outcome = await runtime.runner.run_model_step(turn)
            runtime.record_usage(context, outcome.usage, events)
            if isinstance(outcome, TurnCompleted):
                runtime.append_messages(context, state, turn_id, outcome.new_messages)
                runtime.end_turn(context, state, turn_id, events, error=outcome.turn_error)
                return go_to(AwaitUserMessage, None)
            incremental = bool(outcome.new_messages)
            if incremental and not isinstance(runtime.runner, UnfinishedTurnMessageBuilder):
                runtime.fail_turn(
                    context, state, turn_id, events, INCREMENTAL_MESSAGES_NEED_BUILDER
                )
                return go_to(AwaitUserMessage, None)
            if isinstance(outcome, TurnContinued):
                self._store_run_state(context, outcome.framework_run_state)
                runtime.append_messages(context, state, turn_id, outcome.new_messages)
                runtime.schema.state.set(context, state)
                return go_to(RunModel, None)
            assert isinstance(outcome, ToolCallsRequested)
            return self._defer_tool_calls(context, state, turn_id, events, outcome)
        finally:
            events.close()

    def _store_run_state(self, context: AsyncContext, run_state: str) -> None:
        size = len(run_state.encode("utf-8"))
        limit = self._runtime.options.max_framework_run_state_bytes
        if size > limit:
            raise ValueTooLarge(
                f"dex-agents: framework run state of {size} bytes exceeds the {limit}-byte limit",
                session_id=context.flow_id,
            )
        self._runtime.schema.framework_run_state.set(context, run_state)

    def _defer_tool_calls(
        self,
        context: AsyncContext,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
        outcome: ToolCallsRequested,
    ) -> StepDecision:
        runtime = self._runtime
        earlier = runtime.turn_records(context, turn_id)
        calls = list(outcome.tool_calls)
        problem = invalid_tool_call_ids(calls, earlier)
        if problem is None and not calls:
            problem = "dex-agents: the runner requested tools without any tool call"
        if problem is not None:
            runtime.fail_turn(context, state, turn_id, events, problem)
            return go_to(AwaitUserMessage, None)
        self._store_run_state(context, outcome.framework_run_state)
        runtime.append_messages(context, state, turn_id, outcome.new_messages)
        interrupts = runtime.interrupts(context)
        now = utc_now()
        deadline_after = runtime.options.interrupt_deadline
        movements: list[StepMovement[str]] = []
        for order, call in enumerate(calls, start=len(earlier)):
            record = call.pending_record(turn_id=turn_id, deferral_order=order)
            runtime.schema.tool_calls.set(context, call.tool_call_id, record)
            events.write(
                ToolCallDeferredPayload(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    effect=call.policy.effect,
                    requires_approval=call.policy.requires_approval,
                )
            )
            if call.policy.requires_approval:
                interrupt = AgentInterrupt(
                    interrupt_id=call.tool_call_id,
                    kind=InterruptKind.TOOL_APPROVAL,
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    arguments=call.arguments,
                    created_at=now,
                    deadline=now + deadline_after if deadline_after is not None else None,
                    allows_free_text=True,
                )
                interrupts.append(interrupt)
                events.write(
                    InterruptRaisedPayload(
                        interrupt_id=interrupt.interrupt_id,
                        tool_call_id=interrupt.tool_call_id,
                        tool_name=interrupt.tool_name,
                        deadline=interrupt.deadline,
                        kind=interrupt.kind,
                        question=None,
                        choices=[],
                        allows_free_text=True,
                    )
                )
                movements.append(StepMovement.of(AwaitToolApproval, call.tool_call_id))
            else:
                movements.append(
                    StepMovement.of(tool_step_for(call.policy.effect), call.tool_call_id)
                )
        runtime.schema.pending_interrupts.set(context, interrupts)
        state.status = AgentStatus.RUNNING_TOOLS
        runtime.schema.state.set(context, state)
        return go_to_many(*movements, StepMovement.of(ResumeTurn, len(calls)))


class ResumeTurn(Step[int]):
    """Waits for every tool result of the response, then resumes the turn with RunModel."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS)

    async def wait_for(self, context: AsyncContext, input: int) -> Wait:
        return Wait.until(self._runtime.schema.tool_call_results.for_n(input))

    async def execute(self, context: AsyncContext, input: int) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if state is None or state.active_turn_id is None:
            return dead_end()
        records = runtime.turn_records(context, state.active_turn_id)
        unfinished = sum(1 for record in records if not is_final(record.status))
        if unfinished:
            # A consumed result belonged to an earlier turn: wait for the rest.
            return go_to(ResumeTurn, unfinished)
        state.status = AgentStatus.RUNNING_MODEL
        runtime.schema.state.set(context, state)
        return go_to(RunModel, None)


def _record_turn_failure_options() -> StepOptions:
    return sync_options(execute_load=(*LOAD_MESSAGES_AND_CHUNKS, *LOAD_TOOL_CALLS))


class RecordTurnFailure(Step[CompactContextInput | None]):
    """RunModel's failure route: the turn ends failed, with the turn-failure note."""

    def __init__(self, runtime: SessionRuntime) -> None:
        self._runtime = runtime

    def get_step_options(self) -> StepOptions:
        return _record_turn_failure_options()

    async def execute(
        self, context: AsyncContext, input: CompactContextInput | None
    ) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if state is None:
            return dead_end()
        recovery = context.recovery_error
        detail = recovery.detail if recovery is not None else "the model Step failed"
        if is_value_too_large_run_state(context):
            return runtime.end_session_value_too_large(context, state, detail)
        turn_id = state.active_turn_id
        if turn_id is None:
            return go_to(AwaitUserMessage, None)
        events = runtime.writer(context, turn_id)
        try:
            runtime.fail_turn(context, state, turn_id, events, detail)
        finally:
            events.close()
        return go_to(AwaitUserMessage, None)
