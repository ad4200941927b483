"""AgentSessionFlow: the durable agent session, one Flow execution per session.

Every model call is a RunModel Step and every tool call its own Step; the
RPCs here are how applications talk to a running session. This module only
declares them (locks, loads, the Step list and the Step table); the Steps live
in `_steps/` and the RPCs' rules in `_rpcs/`. Every mutating RPC answers a
repeated client request ID once (`_rpcs/client_requests.py`).
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, TypeVar

from dex import (
    Context,
    Flow,
    PersistenceSchema,
    RPCResult,
    Step,
    StepList,
    StepMovement,
    Stream,
    rpc,
)
from dex_agents_contracts import (
    AgentEvent,
    AgentMessagesPage,
    AgentSessionStartInput,
    AgentSnapshot,
    AgentUserMessage,
    AnswerQuestionRequest,
    CancelTurnRequest,
    DeleteQueuedMessageRequest,
    ExecutePlanRequest,
    ListAgentMessagesRequest,
    ResolveInterruptRequest,
    SendUserMessageRequest,
    SteerUserMessageRequest,
    UpdateSessionSettingsRequest,
)

from dex_agents.errors import UserError
from dex_agents.options import AgentSessionOptions
from dex_agents.runner import AgentFrameworkRunner
from dex_agents.session._rpcs import control, interrupts, plan, reads, settings
from dex_agents.session._rpcs.client_requests import answer_once
from dex_agents.session._rpcs.reads import (
    DEFAULT_MESSAGE_PAGE_LIMIT,
    MAX_MESSAGE_PAGE_LIMIT,
    SNAPSHOT_MESSAGE_LIMIT,
)
from dex_agents.session._runtime import SessionRuntime
from dex_agents.session._schema import (
    AGENT_MESSAGE_CHUNKS,
    AGENT_MESSAGES,
    AGENT_TOOL_CALLS,
    CLIENT_REQUESTS,
    PENDING_INTERRUPTS,
    PENDING_PLAN_EXECUTION,
    QUEUED_USER_MESSAGES,
    STEERED_USER_MESSAGES,
    TURN_CANCELLATION_REQUEST,
    SessionSchema,
)
from dex_agents.session._step_base import SessionStep
from dex_agents.session._step_table import SessionSteps
from dex_agents.session._steps.compaction import CompactContext
from dex_agents.session._steps.control import ApplyTurnControl, FinishTurnCancellation
from dex_agents.session._steps.model import (
    AwaitUserMessage,
    RecordTurnFailure,
    ResumeTurn,
    RunModel,
)
from dex_agents.session._steps.questions import AwaitQuestionAnswer
from dex_agents.session._steps.start import StartAgentSession
from dex_agents.session._steps.tasks import CancelToolTask, PollToolTask
from dex_agents.session._steps.timer import AwaitTimer
from dex_agents.session._steps.tools import (
    AwaitToolApproval,
    CallSingleAttemptTool,
    CallTool,
    RecordToolFailure,
    RecordToolOutcomeUnknown,
)
from dex_agents.tracing import TracingOptions

__all__ = [
    "DEFAULT_MESSAGE_PAGE_LIMIT",
    "MAX_MESSAGE_PAGE_LIMIT",
    "SNAPSHOT_MESSAGE_LIMIT",
    "AgentSessionFlow",
]

InputT = TypeVar("InputT")

STEPS = SessionSteps(
    start=StartAgentSession,
    await_user_message=AwaitUserMessage,
    run_model=RunModel,
    compact_context=CompactContext,
    resume_turn=ResumeTurn,
    record_turn_failure=RecordTurnFailure,
    await_tool_approval=AwaitToolApproval,
    call_tool=CallTool,
    call_single_attempt_tool=CallSingleAttemptTool,
    record_tool_failure=RecordToolFailure,
    record_tool_outcome_unknown=RecordToolOutcomeUnknown,
    apply_turn_control=ApplyTurnControl,
    finish_turn_cancellation=FinishTurnCancellation,
    await_question_answer=AwaitQuestionAnswer,
    await_timer=AwaitTimer,
    poll_tool_task=PollToolTask,
    cancel_tool_task=CancelToolTask,
)
"""The movement table every session Flow type shares: its Steps, and no others."""


def _built(step: type[Step[InputT]], runtime: SessionRuntime) -> Step[InputT]:
    """One Step of the table, sharing `runtime`; a table holds session Steps only."""
    if not issubclass(step, SessionStep):
        raise UserError(f"`step_table` holds {step.__qualname__!r}, which is not a SessionStep")
    return step(runtime)


class AgentSessionFlow(Flow[AgentSessionStartInput]):
    """The shared session Flow, run by one framework runner under one Flow type.

    Register it with `agent_registry([flow])` (or `Registry([flow],
    agent_codec_registry(), allow_async_handlers=True)`): SDK 1.23.0 takes the
    wire codecs only through the Registry.
    """

    step_table: ClassVar[SessionSteps] = STEPS
    """The Step classes this Flow type registers and its Steps move between; a
    subclass may name its own (tests stand in for Steps this way)."""

    runtime_type: ClassVar[type[SessionRuntime]] = SessionRuntime
    """What the Steps share; a subclass may change a turn rule (tests stand in for
    an older Worker this way)."""

    def __init__(
        self,
        runner: AgentFrameworkRunner[Any],
        *,
        flow_type: str,
        options: AgentSessionOptions | None = None,
        tracing: TracingOptions | None = None,
    ) -> None:
        if not isinstance(runner, AgentFrameworkRunner):
            raise UserError(
                "`runner` must implement AgentFrameworkRunner "
                "(build_user_message, run_model_step, execute_deferred_tool_call)"
            )
        if not isinstance(flow_type, str) or not flow_type or "/" in flow_type:
            raise UserError(f"`flow_type` {flow_type!r} must be a non-empty name without '/'")
        options = options or AgentSessionOptions()
        self.runner = runner
        self.options = options
        self.schema = SessionSchema.create(self.options.event_stream_capacity_bytes)
        self._flow_type = flow_type
        self._runtime = self.runtime_type(
            runner=runner, options=self.options, schema=self.schema, steps=self.step_table
        )
        # Only options that need a capability read the declaration here: a RemoteRunner
        # connects when first asked, and a Flow with default options asks on its first Step.
        if options.plan_mode_enabled and not self._runtime.declared.capabilities.plan_mode:
            raise UserError("`plan_mode_enabled` needs a runner that declares plan_mode")
        if options.compaction is not None and not self._runtime.declared.capabilities.compaction:
            raise UserError(
                "`compaction` needs a runner that declares compaction and implements "
                "ContextCompactionRunner (estimate_input_tokens, select_compaction_cutoff, "
                "summarize_context)"
            )
        self.tracing_options: TracingOptions | None = None
        if tracing is not None:
            self.enable_tracing(tracing)

    def enable_tracing(self, options: TracingOptions) -> None:
        """Emit this Flow type's spans (design "Tracing"); loads OpenTelemetry.

        A Worker given `tracing=` calls this for each session Flow that has no
        options of its own. Raises UserError without the `otel` extra.
        """
        if not isinstance(options, TracingOptions):
            raise UserError(f"`tracing` must be TracingOptions, not {type(options).__name__}")
        if options.enabled:
            try:
                importlib.import_module("opentelemetry.trace")
            except ImportError as error:
                raise UserError("tracing needs OpenTelemetry: install dex-agents[otel]") from error
        self._runtime.tracing.configure(options, default_agent_name=self._flow_type)
        self.tracing_options = options

    @property
    def events(self) -> Stream[AgentEvent]:
        """The AgentEvents Stream of this Flow type."""
        return self.schema.events

    def get_flow_type(self) -> str:
        return self._flow_type

    def get_steps(self) -> StepList[AgentSessionStartInput]:
        table, runtime = self.step_table, self._runtime
        return StepList.start_step(_built(table.start, runtime)).other_steps(
            *(_built(step, runtime) for step in table.others())
        )

    def get_persistence_schema(self) -> PersistenceSchema:
        return self.schema.persistence_schema()

    # --- RPCs ------------------------------------------------------------------------
    # Grouped by feature; each group's rules live in its own module. Every mutating
    # RPC loads ClientRequests and answers through `answer_once`, so a repeated
    # client request ID gets its first true answer and changes nothing.

    @rpc(is_transactional=True, load_attribute_maps=(CLIENT_REQUESTS,))
    def send_user_message(
        self, context: Context, request: SendUserMessageRequest
    ) -> RPCResult[bool]:
        """Queues a user message; false for blank text, or plan_mode without plan mode."""
        message = AgentUserMessage(text=request.text, plan_mode=request.plan_mode)
        return answer_once(
            self.schema,
            context,
            "send_user_message",
            request,
            lambda: RPCResult(
                control.send_user_message(
                    self.schema, context, message, plan_mode_enabled=self.options.plan_mode_enabled
                )
            ),
        )

    # --- RPCs: interrupts and questions ---

    @rpc(lock_attributes=(PENDING_INTERRUPTS.lock(),), load_attribute_maps=(CLIENT_REQUESTS,))
    def resolve_interrupt(
        self, context: Context, request: ResolveInterruptRequest
    ) -> RPCResult[bool]:
        """Approves or rejects a pending interrupt; false when it is not pending or expired."""
        return answer_once(
            self.schema,
            context,
            "resolve_interrupt",
            request,
            lambda: RPCResult(interrupts.resolve_interrupt(self.schema, context, request)),
        )

    @rpc(lock_attributes=(PENDING_INTERRUPTS.lock(),), load_attribute_maps=(CLIENT_REQUESTS,))
    def answer_question(self, context: Context, request: AnswerQuestionRequest) -> RPCResult[bool]:
        """Answers a pending question; false when it is not pending, expired, or the
        answer is blank or outside its choices while free text is not allowed."""
        return answer_once(
            self.schema,
            context,
            "answer_question",
            request,
            lambda: RPCResult(interrupts.answer_question(self.schema, context, request)),
        )

    # --- RPCs: plan mode ---

    @rpc(lock_attributes=(PENDING_PLAN_EXECUTION.lock(),), load_attribute_maps=(CLIENT_REQUESTS,))
    def execute_plan(self, context: Context, request: ExecutePlanRequest) -> RPCResult[bool]:
        """Approves a draft or active plan revision; an idle session then executes it."""
        return answer_once(
            self.schema,
            context,
            "execute_plan",
            request,
            lambda: RPCResult(plan.accept_plan_execution(self.schema, context, request)),
        )

    # --- RPCs: steering and cancellation ---

    @rpc(
        is_transactional=True,
        load_channels=(QUEUED_USER_MESSAGES,),
        load_attribute_maps=(CLIENT_REQUESTS,),
    )
    def steer_user_message(
        self, context: Context, request: SteerUserMessageRequest
    ) -> RPCResult[bool]:
        """Redirects the active turn with a new or a queued message; queues it when idle."""
        return answer_once(
            self.schema,
            context,
            "steer_user_message",
            request,
            lambda: RPCResult(control.steer_user_message(self.schema, context, request)),
        )

    @rpc(
        is_transactional=True,
        load_channels=(QUEUED_USER_MESSAGES,),
        load_attribute_maps=(CLIENT_REQUESTS,),
    )
    def delete_queued_message(
        self, context: Context, request: DeleteQueuedMessageRequest
    ) -> RPCResult[bool]:
        """Drops a queued message before a turn takes it; false when it is not pending."""
        return answer_once(
            self.schema,
            context,
            "delete_queued_message",
            request,
            lambda: RPCResult(control.delete_queued_message(self.schema, context, request)),
        )

    @rpc(
        lock_attributes=(TURN_CANCELLATION_REQUEST.lock(), PENDING_INTERRUPTS.lock()),
        load_attribute_maps=(CLIENT_REQUESTS,),
    )
    def cancel_turn(self, context: Context, request: CancelTurnRequest) -> RPCResult[bool]:
        """Stops the active turn: cancels its model call and waits, then settles its calls."""
        return answer_once(
            self.schema,
            context,
            "cancel_turn",
            request,
            lambda: self._cancel_turn(context, request),
        )

    def _cancel_turn(self, context: Context, request: CancelTurnRequest) -> RPCResult[bool]:
        decision = control.accept_turn_cancellation(self.schema, context, request)
        if decision.turn_id is None:
            return RPCResult(decision.accepted)  # refused, or already cancelled
        steps = self.step_table
        return RPCResult(
            True, next_steps=(StepMovement.of(steps.finish_turn_cancellation, decision.turn_id),)
        ).with_canceling_steps(*steps.cancelled_by_cancel_turn())

    # --- RPCs: session settings ---

    @rpc(is_transactional=True, load_attribute_maps=(CLIENT_REQUESTS,))
    def update_session_settings(
        self, context: Context, request: UpdateSessionSettingsRequest
    ) -> RPCResult[bool]:
        """Replaces the settings later turns start with; `{}` clears them.

        False before StartAgentSession committed, and for settings that are missing,
        not a JSON object, or too large. The active turn keeps its own copy.
        """
        return answer_once(
            self.schema,
            context,
            "update_session_settings",
            request,
            lambda: RPCResult(settings.update_session_settings(self.schema, context, request)),
        )

    # --- RPCs: reads ---

    @rpc(
        load_attribute_maps=(AGENT_MESSAGES, AGENT_MESSAGE_CHUNKS, AGENT_TOOL_CALLS),
        load_channels=(QUEUED_USER_MESSAGES, STEERED_USER_MESSAGES),
    )
    def get_agent_snapshot(self, context: Context) -> RPCResult[AgentSnapshot]:
        """The session as committed: state, recent messages, interrupts, tool calls, usage."""
        return RPCResult(reads.snapshot(self._runtime, context))

    @rpc(load_attribute_maps=(AGENT_MESSAGES, AGENT_MESSAGE_CHUNKS))
    def list_agent_messages(
        self, context: Context, request: ListAgentMessagesRequest
    ) -> RPCResult[AgentMessagesPage]:
        """One page of stored messages, oldest first, ending before `before_sequence`."""
        return RPCResult(reads.message_page(self._runtime, context, request))
