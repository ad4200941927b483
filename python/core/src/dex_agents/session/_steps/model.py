"""AwaitUserMessage, RunModel, ResumeTurn and RecordTurnFailure: a turn's model calls.

One model call per Step; RunModel stores its outcome in one commit and defers
each tool call to its own Step, found in the Step table.
"""

from __future__ import annotations

from collections.abc import Sequence

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
from dex_agents_contracts import (
    AgentInterrupt,
    AgentState,
    AgentStatus,
    AgentToolCall,
    CancellationReason,
    CompactContextInput,
    InterruptKind,
    ToolCallCancellation,
    ToolCallDeferredPayload,
    ToolCallStatus,
)

from dex_agents._runner.errors import TURN_ENDING_ERRORS, turn_error_of
from dex_agents._runner.tool_call_ids import invalid_tool_call_ids
from dex_agents._runner.values import usage_of
from dex_agents.errors import ValueTooLarge
from dex_agents.results import is_final
from dex_agents.runner import ToolCallsRequested, TurnCompleted, TurnContinued
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._movements import (
    go_to_apply_turn_control,
    go_to_run_model,
    run_model_options,
)
from dex_agents.session._rules.built_in_calls import BuiltInCallRouter
from dex_agents.session._rules.compaction import compaction_decision
from dex_agents.session._rules.plan_mode import plan_execution_condition, start_plan_execution
from dex_agents.session._rules.turn_control import (
    abandons_waiting,
    end_controlled_turn,
    remove_pending_interrupts,
    turn_cancelled,
    turn_control_reason,
    turn_steered,
)
from dex_agents.session._runtime import is_value_too_large_run_state
from dex_agents.session._schema import MAX_CHANNEL_COUNT
from dex_agents.session._step_base import SessionStep, WaitingSessionStep
from dex_agents.session._step_options import (
    LOAD_MESSAGES,
    LOAD_TOOL_CALLS,
    LOCK_CANCELLATION,
    LOCK_INTERRUPTS,
    record_turn_failure_options,
    sync_options,
)
from dex_agents.session._stores.interrupts import interrupt_raised, new_interrupt
from dex_agents.session._time import utc_now
from dex_agents.session._tool_lanes import plan_lanes
from dex_agents.session._tracing import model_call_content, model_call_references

__all__ = [
    "INCREMENTAL_MESSAGES_NEED_BUILDER",
    "AwaitUserMessage",
    "RecordTurnFailure",
    "ResumeTurn",
    "RunModel",
]

INCREMENTAL_MESSAGES_NEED_BUILDER = (
    "a runner that sets ToolCallsRequested.new_messages must implement "
    "build_unfinished_turn_messages"
)


class AwaitUserMessage(WaitingSessionStep[None]):
    """Waits for a steer, a queued user message or a plan approval, and starts a turn."""

    def get_step_options(self) -> StepOptions:
        # The cancellation lock keeps a turn from starting while cancel_turn decides.
        return sync_options(execute_load=LOAD_MESSAGES, execute_locks=LOCK_CANCELLATION)

    async def wait(self, context: AsyncContext, input: None) -> Wait:
        schema = self._runtime.schema
        # Dex selects in argument order: a steer, then a message, then an approval.
        conditions = [
            schema.turn_control_requests.for_range(at_least=1, at_most=MAX_CHANNEL_COUNT),
            schema.queued_user_messages.for_one(),
        ]
        approval = plan_execution_condition(schema, context)
        if approval is not None:
            conditions.append(approval)
        return Wait.any_of(*conditions)

    async def run(self, context: AsyncContext, input: None) -> StepDecision:
        runtime = self._runtime
        schema = runtime.schema
        state = runtime.state(context)
        if state is None:
            return go_to(runtime.steps.await_user_message, None)
        if schema.turn_control_requests.results(context):
            return go_to_apply_turn_control(runtime, context)
        if state.active_turn_id is not None:
            # Defensive: never two turns at once; the message is lost otherwise.
            return dead_end()
        received = schema.queued_user_messages.results(context)
        if received:
            if not await runtime.begin_turn(context, state, [received[0]]):
                return go_to(
                    runtime.steps.await_user_message, None
                )  # too large to store: the turn failed
            return go_to_run_model(runtime, context)
        plan = schema.plan.get(context)
        approvals = (
            schema.plan_executions.results(context, str(plan.revision)) if plan is not None else ()
        )
        if approvals and await start_plan_execution(runtime, context, state, approvals[0]):
            return go_to_run_model(runtime, context)
        return go_to(runtime.steps.await_user_message, None)


class RunModel(SessionStep[CompactContextInput | None]):
    """One model call through the runner; stores its outcome in one commit."""

    def get_step_options(self) -> StepOptions:
        return run_model_options(self._runtime.steps)

    async def run(self, context: AsyncContext, input: CompactContextInput | None) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if state is None or state.active_turn_id is None:
            return dead_end()
        turn_id = state.active_turn_id
        with runtime.writer(context, turn_id) as events:
            reason = turn_control_reason(runtime.schema, context, state)
            if reason is not None:
                # Steering never cancels a model call that started; before it, the
                # turn ends here and ApplyTurnControl starts the steered one.
                await end_controlled_turn(
                    runtime,
                    context,
                    state,
                    reason,
                    events,
                    steered_message_count=runtime.schema.steered_user_messages.size(context),
                )
                return go_to_apply_turn_control(runtime, context)
            turn = runtime.turn_context(context, state, turn_id, events)
            # Decision point 2 (compaction): may move to CompactContext instead.
            compaction = await compaction_decision(runtime, context, state, turn)
            if compaction is not None:
                return compaction
            root = runtime.activation_root(context)
            try:
                with runtime.tracing.model_call(root, turn_id) as call:
                    outcome = await runtime.runner.run_model_step(turn)
                    call.outcome(
                        metadata=outcome.model_call_metadata,
                        usage=usage_of(outcome),
                        references=model_call_references(turn, state, outcome),
                        content=lambda: model_call_content(turn, outcome),
                    )
            except TURN_ENDING_ERRORS as error:
                # Stored data the runner cannot read, or its framework's own refusal:
                # every retry would meet it again, so the turn ends now.
                await runtime.fail_turn(context, state, turn_id, events, turn_error_of(error))
                return go_to(runtime.steps.await_user_message, None)
            runtime.record_usage(context, usage_of(outcome), events)
            if isinstance(outcome, TurnCompleted):
                runtime.append_messages(context, state, turn_id, outcome.new_messages)
                runtime.end_turn(context, state, turn_id, events, error=outcome.turn_error)
                return go_to(runtime.steps.await_user_message, None)
            incremental = bool(outcome.new_messages)
            if incremental and runtime.declared.unfinished_turn_builder is None:
                await runtime.fail_turn(
                    context, state, turn_id, events, INCREMENTAL_MESSAGES_NEED_BUILDER
                )
                return go_to(runtime.steps.await_user_message, None)
            if isinstance(outcome, TurnContinued):
                self._store_run_state(context, outcome.framework_run_state)
                runtime.append_messages(context, state, turn_id, outcome.new_messages)
                runtime.schema.state.set(context, state)
                return go_to_run_model(runtime, context)
            assert isinstance(outcome, ToolCallsRequested)
            return await self._defer_tool_calls(context, state, turn_id, events, outcome)

    def _store_run_state(self, context: AsyncContext, run_state: str) -> None:
        size = len(run_state.encode("utf-8"))
        limit = self._runtime.options.max_framework_run_state_bytes
        if size > limit:
            raise ValueTooLarge(
                f"dex-agents: framework run state of {size} bytes exceeds the {limit}-byte limit",
                session_id=context.flow_id,
            )
        self._runtime.schema.framework_run_state.set(context, run_state)

    async def _defer_tool_calls(
        self,
        context: AsyncContext,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
        outcome: ToolCallsRequested,
    ) -> StepDecision:
        runtime = self._runtime
        steps = runtime.steps
        earlier = runtime.turn_records(context, turn_id)
        calls = list(outcome.tool_calls)
        problem = invalid_tool_call_ids(calls, earlier)
        if problem is None and not calls:
            problem = "dex-agents: the runner requested tools without any tool call"
        if problem is not None:
            await runtime.fail_turn(context, state, turn_id, events, problem)
            return go_to(runtime.steps.await_user_message, None)
        self._store_run_state(context, outcome.framework_run_state)
        runtime.append_messages(context, state, turn_id, outcome.new_messages)
        root = runtime.activation_root(context)
        raised: list[AgentInterrupt] = []
        now = utc_now()
        built_ins = BuiltInCallRouter(
            runtime,
            context,
            interaction_mode=state.interaction_mode,
            calls=calls,
            raised=raised,
            events=events,
            now=now,
        )
        movements: list[StepMovement[str]] = []
        lane_calls: list[AgentToolCall] = []  # plain tool calls, started a bounded few at a time
        for order, call in enumerate(calls, start=len(earlier)):
            record = built_ins.record_for(call, turn_id=turn_id, order=order)
            record.trace_context = root  # the tool spans join this activation
            runtime.schema.tool_calls.set(context, call.tool_call_id, record)
            events.write(
                ToolCallDeferredPayload(
                    tool_call_id=call.tool_call_id,
                    tool_name=call.tool_name,
                    effect=record.effect,
                    requires_approval=record.requires_approval,
                )
            )
            if built_ins.handles(call):
                # Built-ins and planning refusals: final here (their results are
                # published in this commit, and ResumeTurn still counts them), or
                # routed to the built-in's waiting Step.
                movement = built_ins.route(record)
                if movement is not None:
                    movements.append(movement)
            elif call.requires_approval:
                interrupt = new_interrupt(
                    record,
                    InterruptKind.TOOL_APPROVAL,
                    call.tool_call_id,
                    now=now,
                    deadline_after=runtime.options.interrupt_deadline,
                )
                raised.append(interrupt)
                events.write(interrupt_raised(interrupt))
                movements.append(StepMovement.of(steps.await_tool_approval, call.tool_call_id))
            else:
                lane_calls.append(record)
        movements.extend(plan_lanes(runtime, context, turn_id, lane_calls))
        runtime.interrupt_store.add(context, raised)
        state.status = AgentStatus.RUNNING_TOOLS
        runtime.schema.state.set(context, state)
        return go_to_many(*movements, StepMovement.of(steps.resume_turn, len(calls)))


class ResumeTurn(WaitingSessionStep[int]):
    """Waits for every tool result of the response, then resumes the turn with RunModel."""

    def get_step_options(self) -> StepOptions:
        return sync_options(execute_load=LOAD_TOOL_CALLS, execute_locks=LOCK_INTERRUPTS)

    async def wait(self, context: AsyncContext, input: int) -> Wait:
        schema = self._runtime.schema
        return Wait.any_of(
            schema.tool_call_results.for_n(input),
            schema.turn_control_requests.for_range(at_least=1, at_most=MAX_CHANNEL_COUNT),
        )

    async def run(self, context: AsyncContext, input: int) -> StepDecision:
        runtime = self._runtime
        state = runtime.state(context)
        if state is None or state.active_turn_id is None:
            return dead_end()
        turn_id = state.active_turn_id
        records = runtime.turn_records(context, turn_id)
        if runtime.schema.turn_control_requests.results(context):
            # A control wake consumes no result: abandon what waits, then wait again.
            if turn_steered(runtime.schema, context) and not turn_cancelled(
                runtime.schema, context, state
            ):
                self._abandon_waiting_calls(context, turn_id, records)
            return go_to(runtime.steps.resume_turn, input)
        unfinished = sum(1 for record in records if not is_final(record.status))
        if unfinished:
            # A consumed result belonged to an earlier turn: wait for the rest.
            return go_to(runtime.steps.resume_turn, unfinished)
        if turn_control_reason(runtime.schema, context, state) is not None:
            return go_to_apply_turn_control(runtime, context)
        state.status = AgentStatus.RUNNING_MODEL
        runtime.schema.state.set(context, state)
        return go_to_run_model(runtime, context)

    def _abandon_waiting_calls(
        self, context: AsyncContext, turn_id: str, records: Sequence[AgentToolCall]
    ) -> None:
        """Steering: wake every call that waits without effect, so it records itself cancelled.

        Interrupts go first, under the PendingInterrupts lock: an answer that
        committed before this removes nothing and wins.
        """
        runtime = self._runtime
        reason = CancellationReason.STEERED
        with runtime.writer(context, turn_id) as events:
            for record in records:
                if not abandons_waiting(record):
                    continue
                if record.status is ToolCallStatus.WAITING_FOR_TIMER or remove_pending_interrupts(
                    runtime, context, record, reason, events
                ):
                    runtime.schema.tool_call_cancellations.publish(
                        context, record.tool_call_id, ToolCallCancellation(reason=reason)
                    )


class RecordTurnFailure(SessionStep[CompactContextInput | None]):
    """RunModel's failure route: the turn ends failed, with the turn-failure note."""

    def get_step_options(self) -> StepOptions:
        return record_turn_failure_options()

    async def run(self, context: AsyncContext, input: CompactContextInput | None) -> StepDecision:
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
            return go_to(runtime.steps.await_user_message, None)
        with runtime.writer(context, turn_id) as events:
            await runtime.fail_turn(context, state, turn_id, events, detail)
        return go_to(runtime.steps.await_user_message, None)
