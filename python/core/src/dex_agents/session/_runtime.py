"""What every Step of one session Flow type shares: runner, options, schema, stores, turn rules.

A turn's start and end are methods here, not a module of their own, because a
Step of any family may end the turn (RunModel, ApplyTurnControl, the failure
routes), and tests stand in for an older Worker by overriding `begin_turn`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dex import AsyncContext, Context, StepDecision, force_fail
from dex_agents_contracts import (
    AgentInterrupt,
    AgentState,
    AgentStatus,
    AgentToolCall,
    AgentUsage,
    AgentUserMessage,
    CancellationReason,
    ContextSummary,
    InteractionMode,
    MessageRole,
    PlanExecutionStartedPayload,
    PlanStatus,
    Struct,
    ToolCallCompleted,
    ToolCallFinishedPayload,
    ToolCallStatus,
    TurnCancelledPayload,
    TurnCompletedPayload,
    TurnFailedPayload,
    TurnReplySequence,
    TurnSessionSettings,
    TurnStartedPayload,
    TurnSteeredPayload,
    UsageRecordedPayload,
    struct_to_json,
)

from dex_agents._runner.awaitables import resolved
from dex_agents._runner.declared import DeclaredRunner, declared_runner
from dex_agents.errors import ValueTooLarge
from dex_agents.options import AgentSessionOptions
from dex_agents.results import is_final, turn_failure_note
from dex_agents.runner import (
    AgentFrameworkRunner,
    AgentTurnContext,
    FrameworkMessage,
)
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._schema import SessionSchema
from dex_agents.session._step_table import SessionSteps
from dex_agents.session._stores.interrupts import InterruptStore
from dex_agents.session._stores.messages import MessageStore
from dex_agents.tracing import SessionTracing

__all__ = ["SessionRuntime", "is_value_too_large_run_state"]

_log = logging.getLogger("dex_agents")


def is_value_too_large_run_state(context: Context) -> bool:
    """A recovery error of type ValueTooLarge whose detail contains `run state of`."""
    recovery = context.recovery_error
    if recovery is None:
        return False
    type_name = recovery.error_type.rsplit(".", 1)[-1]
    return type_name == "ValueTooLarge" and "run state of" in recovery.detail


@dataclass(frozen=True)
class SessionRuntime:
    """The runner, options and schema of one Flow type, plus the turn rules every Step applies."""

    runner: AgentFrameworkRunner[Any]
    options: AgentSessionOptions
    schema: SessionSchema
    steps: SessionSteps
    """The Step table: where a Step finds the Steps of other families."""
    tracing: SessionTracing = field(default_factory=SessionTracing)
    """Spans of this Flow type's Steps; off until a Worker or the Flow enables it."""

    @functools.cached_property
    def declared(self) -> DeclaredRunner:
        """The runner's declared capabilities, read once on first use (a RemoteRunner connects
        then); every optional runner method is reached through it."""
        return declared_runner(self.runner)

    @property
    def store(self) -> MessageStore:
        return MessageStore(self.schema, self.options)

    @property
    def interrupt_store(self) -> InterruptStore:
        return InterruptStore(self.schema)

    # --- reads ---------------------------------------------------------------------

    def state(self, context: Context) -> AgentState | None:
        return self.schema.state.get(context)

    def interrupts(self, context: Context) -> list[AgentInterrupt]:
        return self.interrupt_store.pending(context)

    def record_in(
        self, context: Context, tool_call_id: str, status: ToolCallStatus
    ) -> AgentToolCall | None:
        """The call's record while it has `status`; a Step that finds none ends."""
        record = self.schema.tool_calls.get(context, tool_call_id)
        return record if record is not None and record.status is status else None

    def turn_records(self, context: Context, turn_id: str) -> list[AgentToolCall]:
        """The turn's tool call records in deferral order (AgentToolCalls loaded whole)."""
        tool_calls = self.schema.tool_calls
        records = [
            tool_calls.get(context, key) for key in tool_calls.get_all_instance_keys(context)
        ]
        return sorted(
            (r for r in records if r is not None and r.turn_id == turn_id),
            key=lambda r: r.deferral_order,
        )

    def turn_settings(self, context: Context, turn_id: str) -> dict[str, object]:
        settings = self.schema.turn_session_settings.get(context)
        if settings is None or settings.turn_id != turn_id or settings.session_settings is None:
            return {}
        return struct_to_json(settings.session_settings)

    def writer(self, context: AsyncContext, turn_id: str | None) -> StepEventWriter:
        return StepEventWriter(self.schema.events, context, turn_id=turn_id)

    def turn_context(
        self,
        context: AsyncContext,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
    ) -> AgentTurnContext:
        """What `run_model_step` sees (AgentMessages, AgentMessageChunks, AgentToolCalls loaded).

        A compaction runner gets only the messages after the summary, which are all
        the chunks a movement into RunModel loads; any other runner gets every stored
        message, and a warning once retention deleted some of them.
        """

        summary: ContextSummary | None = self.schema.context_summary.get(context)
        if summary is not None and self.declared.compaction_runner is not None:
            messages = self.store.read_range(context, after=summary.last_sequence)
        else:
            summary = None
            messages = self.store.read_all(context)
            index = self.store.index(context)
            if index is not None and index.first_sequence > 1:
                _log.warning(
                    "session %s: messages before sequence %d were deleted, and the runner "
                    "%s does not declare compaction, so the model input "
                    "lacks them and has no summary",
                    context.flow_id,
                    index.first_sequence,
                    type(self.runner).__name__,
                )

        return AgentTurnContext(
            flow_id=context.flow_id,
            turn_id=turn_id,
            attempt=context.attempt,
            messages=tuple(messages),
            framework_run_state=self.schema.framework_run_state.get(context),
            tool_calls=tuple(self.turn_records(context, turn_id)),
            tool_policies=self.options.tool_policies,
            default_tool_effect=self.options.default_tool_effect,
            events=events,
            heartbeat=context.heartbeat,
            enabled_built_in_tools=self.options.built_in_tools,
            session_settings=self.turn_settings(context, turn_id),
            interaction_mode=state.interaction_mode,
            plan=self.schema.plan.get(context),
            context_summary=summary,
        )

    # --- tracing -------------------------------------------------------------------

    def activate(
        self,
        context: Context,
        *,
        turn_id: str | None,
        activation: str,
        tool_call_id: str | None = None,
    ) -> str | None:
        """This attempt consumed an outside input: start its root, store its traceparent.

        AgentTraceContext holds the traceparent while the root has a valid context
        and is deleted otherwise; with tracing off it is never written.
        """
        tracing = self.tracing
        if not tracing.enabled:
            return None
        stored = self.schema.trace_context
        traceparent = tracing.activation(
            previous=stored.get(context) or None,
            turn_id=turn_id,
            activation=activation,
            tool_call_id=tool_call_id,
        )
        if traceparent is None:
            stored.delete(context)
        else:
            stored.set(context, traceparent)
        return traceparent

    def activation_root(self, context: Context) -> str | None:
        """The current activation's traceparent (None with tracing off or without one)."""
        if not self.tracing.enabled:
            return None
        return self.schema.trace_context.get(context) or None

    # --- turn lifecycle ------------------------------------------------------------

    def turn_mode(self, context: Context, messages: Sequence[AgentUserMessage]) -> InteractionMode:
        """The one rule every turn start applies: planning or chat (executing has its own start)."""
        if self.options.plan_mode_enabled:
            if any(message.plan_mode for message in messages):
                return InteractionMode.PLANNING
            plan = self.schema.plan.get(context)
            if plan is not None and plan.status is PlanStatus.DRAFT:
                return InteractionMode.PLANNING
        return InteractionMode.CHAT

    async def begin_turn(
        self, context: AsyncContext, state: AgentState, messages: Sequence[AgentUserMessage]
    ) -> bool:
        """Append the turn's user messages, in order, and start a chat or planning turn.

        One message for a queued turn, several for steered ones. Writes AgentState.
        False when a message is too large to store: the turn failed in this commit.
        """
        if not messages:
            raise ValueError("a turn starts with at least one user message")
        mode = self.turn_mode(context, messages)
        texts = [message.text for message in messages]
        return await self._start_turn(context, state, texts, mode, plan_revision=None)

    async def begin_executing_turn(
        self, context: AsyncContext, state: AgentState, text: str, revision: int
    ) -> bool:
        """Start the executing turn of an approved plan revision (turn_started, then
        plan_execution_started). False when the message is too large to store."""
        return await self._start_turn(
            context, state, [text], InteractionMode.EXECUTING, plan_revision=revision
        )

    async def _start_turn(
        self,
        context: AsyncContext,
        state: AgentState,
        texts: Sequence[str],
        mode: InteractionMode,
        *,
        plan_revision: int | None,
    ) -> bool:
        turn_id = f"turn-{state.turn_count + 1}"
        self.activate(
            context,
            turn_id=turn_id,
            activation="plan_execution" if plan_revision is not None else "user_message",
        )
        state.active_turn_id = turn_id
        state.status = AgentStatus.RUNNING_MODEL
        state.interaction_mode = mode
        # This Worker honours steering and cancel_turn (accepts_turn_control).
        state.accepts_turn_control = True
        with self.writer(context, turn_id) as events:
            try:
                built = [await resolved(self.runner.build_user_message(t)) for t in texts]
                stored = self.store.append(context, state, turn_id, built)
            except ValueTooLarge as error:
                # A message too large for values.maxValueBytes fails the turn (message
                # storage, docs/architecture.md). Nothing of it is stored, so no retry
                # meets it again.
                self._fail_unstored_turn(context, state, events, str(error))
                return False
            self.schema.turn_reply_sequence.set(
                context, TurnReplySequence(turn_id=turn_id, sequence=state.next_message_sequence)
            )
            settings = self.schema.session_settings.get(context)
            self.schema.turn_session_settings.set(
                context,
                TurnSessionSettings(turn_id=turn_id, session_settings=settings or Struct()),
            )
            self.schema.state.set(context, state)
            events.write(TurnStartedPayload(sequence=stored[0].sequence))
            if plan_revision is not None:
                events.write(PlanExecutionStartedPayload(revision=plan_revision))
            return True

    def _fail_unstored_turn(
        self, context: AsyncContext, state: AgentState, events: StepEventWriter, error: str
    ) -> None:
        """End a turn whose user message was not stored: no messages, records or run state."""
        state.turn_count += 1
        state.active_turn_id = None
        state.status = AgentStatus.WAITING_FOR_USER_MESSAGE
        state.accepts_turn_control = False
        state.last_turn_error = error
        self.schema.state.set(context, state)
        events.write(TurnFailedPayload(error=error))

    def append_messages(
        self,
        context: Context,
        state: AgentState,
        turn_id: str,
        messages: Sequence[FrameworkMessage],
    ) -> None:
        """Store a started turn's messages (recording its TurnReplySequence if missing)."""
        if messages:
            self.store.record_reply_sequence(context, state, turn_id)
        self.store.append(context, state, turn_id, messages)

    def record_usage(self, context: Context, usage: AgentUsage, events: StepEventWriter) -> None:
        total = self.schema.usage.get(context) or AgentUsage()
        total = AgentUsage(
            model_calls=total.model_calls + usage.model_calls,
            input_tokens=total.input_tokens + usage.input_tokens,
            output_tokens=total.output_tokens + usage.output_tokens,
            cached_input_tokens=total.cached_input_tokens + usage.cached_input_tokens,
            reasoning_tokens=total.reasoning_tokens + usage.reasoning_tokens,
        )
        self.schema.usage.set(context, total)
        events.write(UsageRecordedPayload(recorded=usage, session=total))

    def finalize_record(
        self, context: Context, record: AgentToolCall, events: StepEventWriter
    ) -> None:
        """Store a final record and publish its one ToolCallCompleted in the same commit."""
        if not is_final(record.status):
            raise ValueError(f"tool call {record.tool_call_id!r} is not final")
        self.schema.tool_calls.set(context, record.tool_call_id, record)
        self.schema.tool_call_results.publish(
            context, ToolCallCompleted(tool_call_id=record.tool_call_id)
        )
        events.write(
            ToolCallFinishedPayload(
                tool_call_id=record.tool_call_id, tool_name=record.tool_name, status=record.status
            )
        )

    def _turn_message_count(self, context: Context, state: AgentState, turn_id: str) -> int:
        return state.next_message_sequence - self.store.reply_sequence(context, state, turn_id)

    def end_turn(
        self,
        context: Context,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
        *,
        error: str | None,
        keep_records: bool = False,
        status: AgentStatus = AgentStatus.WAITING_FOR_USER_MESSAGE,
        ended_by: CancellationReason | None = None,
        steered_message_count: int = 0,
    ) -> None:
        """Clear the turn: records, run state and interrupts; count it; write the end event.

        `ended_by` marks a steered or cancelled turn, which ends without an error.
        """
        message_count = self._turn_message_count(context, state, turn_id)
        if not keep_records:
            for record in self.turn_records(context, turn_id):
                self.schema.tool_calls.delete(context, record.tool_call_id)
        self.schema.framework_run_state.delete(context)
        self.interrupt_store.clear(context)
        state.turn_count += 1
        state.active_turn_id = None
        state.status = status
        state.accepts_turn_control = False
        state.last_turn_error = error
        self.schema.state.set(context, state)
        if ended_by is CancellationReason.TURN_CANCELLED:
            events.write(TurnCancelledPayload(message_count=message_count))
        elif ended_by is CancellationReason.STEERED:
            events.write(
                TurnSteeredPayload(
                    steered_message_count=steered_message_count, message_count=message_count
                )
            )
        elif error is None:
            events.write(TurnCompletedPayload(message_count=message_count))
        else:
            events.write(TurnFailedPayload(error=error))

    async def fail_turn(
        self,
        context: AsyncContext,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
        error: str,
    ) -> None:
        """RecordTurnFailure's rule: unfinished-turn messages, the note, then end the turn."""
        records = self.turn_records(context, turn_id)
        if self.declared.unfinished_turn_builder is not None:
            unfinished = await self.unfinished_messages(context, state, turn_id, events) or []
            try:
                self.append_messages(context, state, turn_id, unfinished)
            except ValueTooLarge:
                # Checked before anything is written, so the failure route still ends the turn.
                _log.warning("unfinished-turn messages too large to store; none stored")
        note = turn_failure_note(records)
        if note is not None:
            message = await resolved(self.runner.build_user_message(note))
            self.append_messages(context, state, turn_id, [message])
        self.end_turn(context, state, turn_id, events, error=error)

    async def unfinished_messages(
        self,
        context: AsyncContext,
        state: AgentState,
        turn_id: str,
        events: StepEventWriter,
    ) -> Sequence[FrameworkMessage] | None:
        """What the runner's build_unfinished_turn_messages returns, or None when it failed.

        A faulty runner is logged, never raised: the turn's end must not be blocked.
        """
        runner = self.declared.unfinished_turn_builder
        assert runner is not None
        try:
            built = await resolved(
                runner.build_unfinished_turn_messages(
                    self.turn_context(context, state, turn_id, events)
                )
            )
            messages = list(built)
            if all(
                isinstance(m, FrameworkMessage)
                and m.role in (MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL)
                and isinstance(m.framework_item, str)
                for m in messages
            ):
                return messages
            _log.warning("build_unfinished_turn_messages returned invalid messages; none stored")
        except Exception:
            _log.warning("build_unfinished_turn_messages failed; none stored", exc_info=True)
        return None

    def end_session_value_too_large(
        self, context: AsyncContext, state: AgentState, detail: str
    ) -> StepDecision:
        """A run state too large to store: end the session, keeping the turn's records."""
        turn_id = state.active_turn_id
        with self.writer(context, turn_id) as events:
            if turn_id is not None:
                self.end_turn(
                    context,
                    state,
                    turn_id,
                    events,
                    error=detail,
                    keep_records=True,
                    status=AgentStatus.FAILED,
                )
            else:
                state.status = AgentStatus.FAILED
                state.last_turn_error = detail
                self.schema.framework_run_state.delete(context)
                self.interrupt_store.clear(context)
                self.schema.state.set(context, state)
                events.write(TurnFailedPayload(error=detail))
        return force_fail(detail)
