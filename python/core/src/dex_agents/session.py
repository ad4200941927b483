"""AgentSessionFlow: the durable agent session, one Flow execution per session.

Every model call is a RunModel Step and every tool call its own Step; the
RPCs here are how applications talk to a running session.
"""

from __future__ import annotations

from typing import Any

from dex import (
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    StepList,
    StepMovement,
    Stream,
    rpc,
)
from dex_agents_contracts import (
    AgentEvent,
    AgentInterruptResolution,
    AgentMessagesPage,
    AgentSessionStartInput,
    AgentSnapshot,
    AgentUsage,
    AgentUserMessage,
    AnswerQuestionRequest,
    CancelTurnRequest,
    DeleteQueuedMessageRequest,
    ExecutePlanRequest,
    InterruptKind,
    ListAgentMessagesRequest,
    PendingUserMessage,
    ResolveInterruptRequest,
    SteerUserMessageRequest,
    Struct,
    UpdateSessionSettingsRequest,
)

from dex_agents._compaction import CompactContext
from dex_agents._messages import MessageStore
from dex_agents._plan_mode import accept_plan_execution
from dex_agents._rpcs_control import (
    accept_turn_cancellation,
    cancel_turn_step_types,
    delete_queued_message,
    steer_user_message,
)
from dex_agents._runtime import SessionRuntime, utc_from
from dex_agents._schema import (
    AGENT_MESSAGE_CHUNKS,
    AGENT_MESSAGES,
    AGENT_TOOL_CALLS,
    PENDING_INTERRUPTS,
    PENDING_PLAN_EXECUTION,
    QUEUED_USER_MESSAGES,
    STEERED_USER_MESSAGES,
    TURN_CANCELLATION_REQUEST,
    SessionSchema,
)
from dex_agents._session_settings import session_settings_problem
from dex_agents._steps_control import ApplyTurnControl, FinishTurnCancellation
from dex_agents._steps_model import AwaitUserMessage, RecordTurnFailure, ResumeTurn, RunModel
from dex_agents._steps_questions import AwaitQuestionAnswer
from dex_agents._steps_session import StartAgentSession
from dex_agents._steps_tasks import CancelToolTask, PollToolTask
from dex_agents._steps_timer import AwaitTimer
from dex_agents._steps_tools import (
    AwaitToolApproval,
    CallSingleAttemptTool,
    CallTool,
    RecordToolFailure,
    RecordToolOutcomeUnknown,
)
from dex_agents._time import utc_now
from dex_agents.errors import UserError
from dex_agents.options import AgentSessionOptions
from dex_agents.runner import AgentFrameworkRunner, ContextCompactionRunner, PlanModeRunner

__all__ = [
    "DEFAULT_MESSAGE_PAGE_LIMIT",
    "MAX_MESSAGE_PAGE_LIMIT",
    "SNAPSHOT_MESSAGE_LIMIT",
    "AgentSessionFlow",
]

SNAPSHOT_MESSAGE_LIMIT = 200
DEFAULT_MESSAGE_PAGE_LIMIT = 50
MAX_MESSAGE_PAGE_LIMIT = 200


class AgentSessionFlow(Flow[AgentSessionStartInput]):
    """The shared session Flow, run by one framework runner under one Flow type.

    Register it with `agent_registry([flow])` (or `Registry([flow],
    agent_codec_registry(), allow_async_handlers=True)`): SDK 1.23.0 takes the
    wire codecs only through the Registry.
    """

    def __init__(
        self,
        runner: AgentFrameworkRunner[Any],
        *,
        flow_type: str,
        options: AgentSessionOptions | None = None,
    ) -> None:
        if not isinstance(runner, AgentFrameworkRunner):
            raise UserError(
                "`runner` must implement AgentFrameworkRunner "
                "(build_user_message, run_model_step, execute_deferred_tool_call)"
            )
        if not isinstance(flow_type, str) or not flow_type or "/" in flow_type:
            raise UserError(f"`flow_type` {flow_type!r} must be a non-empty name without '/'")
        options = options or AgentSessionOptions()
        if options.plan_mode_enabled and not (
            isinstance(runner, PlanModeRunner) and runner.supports_plan_mode
        ):
            raise UserError("`plan_mode_enabled` needs a runner whose `supports_plan_mode` is true")
        if options.compaction is not None and not isinstance(runner, ContextCompactionRunner):
            raise UserError(
                "`compaction` needs a runner that implements ContextCompactionRunner "
                "(estimate_input_tokens, select_compaction_cutoff, summarize_context)"
            )
        self.runner = runner
        self.options = options
        self.schema = SessionSchema.create(self.options.event_stream_capacity_bytes)
        self._flow_type = flow_type
        self._runtime = SessionRuntime(runner=runner, options=self.options, schema=self.schema)

    @property
    def events(self) -> Stream[AgentEvent]:
        """The AgentEvents Stream of this Flow type."""
        return self.schema.events

    def get_flow_type(self) -> str:
        return self._flow_type

    def get_steps(self) -> StepList[AgentSessionStartInput]:
        runtime = self._runtime
        return StepList.start_step(StartAgentSession(runtime)).other_steps(
            AwaitUserMessage(runtime),
            RunModel(runtime),
            CompactContext(runtime),
            ResumeTurn(runtime),
            RecordTurnFailure(runtime),
            AwaitToolApproval(runtime),
            CallTool(runtime),
            CallSingleAttemptTool(runtime),
            RecordToolFailure(runtime),
            RecordToolOutcomeUnknown(runtime),
            ApplyTurnControl(runtime),
            FinishTurnCancellation(runtime),
            AwaitQuestionAnswer(runtime),
            AwaitTimer(runtime),
            PollToolTask(runtime),
            CancelToolTask(runtime),
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return self.schema.persistence_schema()

    # --- RPCs ------------------------------------------------------------------------
    # Grouped by feature; each group's rules live in its own module.

    @rpc(is_transactional=True)
    def send_user_message(self, context: Context, message: AgentUserMessage) -> RPCResult[bool]:
        """Queues a user message; false for blank text, or plan_mode without plan mode."""
        text = message.text
        if not isinstance(text, str) or not text.strip():
            return RPCResult(False)
        plan_mode = message.plan_mode is True
        if plan_mode and not self.options.plan_mode_enabled:
            return RPCResult(False)
        QUEUED_USER_MESSAGES.publish(context, AgentUserMessage(text=text, plan_mode=plan_mode))
        return RPCResult(True)

    @rpc(lock_attributes=(PENDING_INTERRUPTS.lock(),))
    def resolve_interrupt(
        self, context: Context, request: ResolveInterruptRequest
    ) -> RPCResult[bool]:
        """Approves or rejects a pending interrupt; false when it is not pending or expired."""
        interrupt_id = request.interrupt_id
        if not isinstance(interrupt_id, str) or not interrupt_id or "/" in interrupt_id:
            return RPCResult(False)
        pending = list(PENDING_INTERRUPTS.get(context) or [])
        interrupt = next((i for i in pending if i.interrupt_id == interrupt_id), None)
        if interrupt is None:
            return RPCResult(False)
        deadline = utc_from(interrupt.deadline)
        if deadline is not None and utc_now() >= deadline:
            return RPCResult(False)
        if interrupt.kind is InterruptKind.QUESTION and request.approved:
            return RPCResult(False)
        PENDING_INTERRUPTS.set(context, [i for i in pending if i.interrupt_id != interrupt_id])
        self.schema.interrupt_resolutions.publish(
            context,
            interrupt_id,
            AgentInterruptResolution(
                approved=request.approved,
                rejection_message=None if request.approved else request.rejection_message,
                answer=None,
            ),
        )
        return RPCResult(True)

    # --- RPCs: questions ---

    @rpc(lock_attributes=(PENDING_INTERRUPTS.lock(),))
    def answer_question(self, context: Context, request: AnswerQuestionRequest) -> RPCResult[bool]:
        """Answers a pending question; false when it is not pending, expired, or the
        answer is blank or outside its choices while free text is not allowed."""
        interrupt_id = request.interrupt_id
        answer = request.answer
        if not isinstance(interrupt_id, str) or not interrupt_id or "/" in interrupt_id:
            return RPCResult(False)
        if not isinstance(answer, str) or not answer.strip():
            return RPCResult(False)
        pending = list(PENDING_INTERRUPTS.get(context) or [])
        interrupt = next((i for i in pending if i.interrupt_id == interrupt_id), None)
        if interrupt is None or interrupt.kind is not InterruptKind.QUESTION:
            return RPCResult(False)
        deadline = utc_from(interrupt.deadline)
        if deadline is not None and utc_now() >= deadline:
            return RPCResult(False)
        if not interrupt.allows_free_text and answer not in interrupt.choices:
            return RPCResult(False)
        PENDING_INTERRUPTS.set(context, [i for i in pending if i.interrupt_id != interrupt_id])
        self.schema.interrupt_resolutions.publish(
            context,
            interrupt_id,
            AgentInterruptResolution(approved=True, rejection_message=None, answer=answer),
        )
        return RPCResult(True)

    # --- RPCs: plan mode ---

    @rpc(lock_attributes=(PENDING_PLAN_EXECUTION.lock(),))
    def execute_plan(self, context: Context, request: ExecutePlanRequest) -> RPCResult[bool]:
        """Approves a draft or active plan revision; an idle session then executes it."""
        return RPCResult(accept_plan_execution(self.schema, context, request))

    # --- RPCs: steering and cancellation ---

    @rpc(is_transactional=True, load_channels=(QUEUED_USER_MESSAGES,))
    def steer_user_message(
        self, context: Context, request: SteerUserMessageRequest
    ) -> RPCResult[bool]:
        """Redirects the active turn with a new or a queued message; queues it when idle."""
        return RPCResult(steer_user_message(self.schema, context, request))

    @rpc(is_transactional=True, load_channels=(QUEUED_USER_MESSAGES,))
    def delete_queued_message(
        self, context: Context, request: DeleteQueuedMessageRequest
    ) -> RPCResult[bool]:
        """Drops a queued message before a turn takes it; false when it is not pending."""
        return RPCResult(delete_queued_message(self.schema, context, request))

    @rpc(lock_attributes=(TURN_CANCELLATION_REQUEST.lock(), PENDING_INTERRUPTS.lock()))
    def cancel_turn(self, context: Context, request: CancelTurnRequest) -> RPCResult[bool]:
        """Stops the active turn: cancels its model call and waits, then settles its calls."""
        decision = accept_turn_cancellation(self.schema, context, request)
        if decision.turn_id is None:
            return RPCResult(decision.accepted)  # refused, or already cancelled
        return RPCResult(
            True, next_steps=(StepMovement.of(FinishTurnCancellation, decision.turn_id),)
        ).with_canceling_steps(*cancel_turn_step_types())

    # --- RPCs: session settings ---

    @rpc(is_transactional=True)
    def update_session_settings(
        self, context: Context, request: UpdateSessionSettingsRequest
    ) -> RPCResult[bool]:
        """Replaces the settings later turns start with; `{}` clears them.

        False before StartAgentSession committed, and for settings that are missing,
        not a JSON object, or too large. The active turn keeps its own copy.
        """
        if self.schema.state.get(context) is None:
            return RPCResult(False)
        settings = request.session_settings
        if not isinstance(settings, Struct) or session_settings_problem(settings) is not None:
            return RPCResult(False)
        if settings.fields:
            self.schema.session_settings.set(context, settings)
        else:
            self.schema.session_settings.delete(context)
        return RPCResult(True)

    # --- RPCs: reads ---

    @rpc(
        load_attribute_maps=(AGENT_MESSAGES, AGENT_MESSAGE_CHUNKS, AGENT_TOOL_CALLS),
        load_channels=(QUEUED_USER_MESSAGES, STEERED_USER_MESSAGES),
    )
    def get_agent_snapshot(self, context: Context) -> RPCResult[AgentSnapshot]:
        """The session as committed: state, recent messages, interrupts, tool calls, usage."""
        runtime = self._runtime
        state = runtime.state(context)
        messages = MessageStore(self.schema, self.options).read_all(context)
        queued = QUEUED_USER_MESSAGES.pending_messages(context)
        tool_calls = (
            runtime.turn_records(context, state.active_turn_id)
            if state is not None and state.active_turn_id is not None
            else []
        )
        return RPCResult(
            AgentSnapshot(
                state=state,
                messages=messages[-SNAPSHOT_MESSAGE_LIMIT:],
                pending_interrupts=runtime.interrupts(context),
                tool_calls=tool_calls,
                usage=self.schema.usage.get(context) or AgentUsage(),
                queued_message_count=len(queued),
                plan=self.schema.plan.get(context),
                queued_messages=[
                    PendingUserMessage(message_id=m.message_id, message=m.value) for m in queued
                ],
                steered_messages=[
                    PendingUserMessage(message_id=m.message_id, message=m.value)
                    for m in STEERED_USER_MESSAGES.pending_messages(context)
                ],
                context_summary=self.schema.context_summary.get(context),
                session_settings=self.schema.session_settings.get(context),
            )
        )

    @rpc(load_attribute_maps=(AGENT_MESSAGES, AGENT_MESSAGE_CHUNKS))
    def list_agent_messages(
        self, context: Context, request: ListAgentMessagesRequest
    ) -> RPCResult[AgentMessagesPage]:
        """One page of stored messages, oldest first, ending before `before_sequence`."""
        store = MessageStore(self.schema, self.options)
        limit = max(1, min(MAX_MESSAGE_PAGE_LIMIT, request.limit))
        before = request.before_sequence
        messages = store.read_all(context)
        if before is not None:
            messages = [m for m in messages if m.sequence < before]
        page = messages[-limit:]
        index = store.index(context)
        oldest = index.first_sequence if index is not None else 1
        next_before = page[0].sequence if page and page[0].sequence > oldest else None
        return RPCResult(
            AgentMessagesPage(
                messages=page,
                next_before_sequence=next_before,
                deleted_before_sequence=oldest if oldest > 1 else None,
            )
        )
