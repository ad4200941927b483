"""The persistence schema of one session Flow type (docs/wire-format.md names each value).

Steps and RPCs reach the definitions through the `SessionSchema` of their Flow.
"""

from __future__ import annotations

from dataclasses import dataclass

from dex import Attribute, AttributeMap, Channel, ChannelMap, PersistenceSchema, Stream
from dex_agents_contracts import (
    AgentEvent,
    AgentInterrupt,
    AgentInterruptResolution,
    AgentMessage,
    AgentMessageChunk,
    AgentMessageIndex,
    AgentPlan,
    AgentState,
    AgentToolCall,
    AgentUsage,
    AgentUserMessage,
    ClientRequestRecord,
    ContextSummary,
    PlanExecutionRequest,
    Struct,
    ToolCallCancellation,
    ToolCallCompleted,
    ToolCallDeferredPayload,
    TurnCancellationRequest,
    TurnControlRequest,
    TurnReplySequence,
    TurnSessionSettings,
)

__all__ = ["MAX_CHANNEL_COUNT", "SessionSchema", "next_tool_call_key", "sequence_key"]

MAX_CHANNEL_COUNT = 2_147_483_647
"""The largest count a Channel condition can name (MAX in the Steps' waits)."""


def sequence_key(sequence: int) -> str:
    """AgentMessages / AgentMessageChunks instance key: 12-digit zero-padded decimal."""
    return f"{sequence:012d}"


def next_tool_call_key(turn_id: str, tool_call_id: str) -> str:
    """NextToolCalls instance key: `<turn_id>:<tool_call_id>` (turn IDs hold no ':').

    Tool call IDs may repeat across turns; the turn keeps an entry of one turn
    from ever naming a call of another.
    """
    return f"{turn_id}:{tool_call_id}"


# Attributes and Channels are shared by every session Flow type: RPC locks and
# loads are declared on the Flow class and matched by identity. Only the
# Stream is per Flow type, because the SDK refuses a Stream two Flows register.
AGENT_STATE: Attribute[AgentState] = Attribute("AgentState", AgentState)
AGENT_MESSAGES: AttributeMap[AgentMessage] = AttributeMap("AgentMessages", AgentMessage)
AGENT_MESSAGE_CHUNKS: AttributeMap[AgentMessageChunk] = AttributeMap(
    "AgentMessageChunks", AgentMessageChunk
)
AGENT_MESSAGE_INDEX: Attribute[AgentMessageIndex] = Attribute(
    "AgentMessageIndex", AgentMessageIndex
)
TURN_REPLY_SEQUENCE: Attribute[TurnReplySequence] = Attribute(
    "TurnReplySequence", TurnReplySequence
)
FRAMEWORK_RUN_STATE: Attribute[str] = Attribute("FrameworkRunState", str)
AGENT_TOOL_CALLS: AttributeMap[AgentToolCall] = AttributeMap("AgentToolCalls", AgentToolCall)
NEXT_TOOL_CALLS: AttributeMap[ToolCallDeferredPayload] = AttributeMap(
    "NextToolCalls", ToolCallDeferredPayload
)
"""Per running call, the call its lane starts when that call's tool Step ends
(`_tool_lanes`); RunModel writes them, each tool Step consumes its own."""
PENDING_INTERRUPTS: Attribute[list[AgentInterrupt]] = Attribute(
    "PendingInterrupts", list[AgentInterrupt]
)
AGENT_USAGE: Attribute[AgentUsage] = Attribute("AgentUsage", AgentUsage)
SESSION_SETTINGS: Attribute[Struct] = Attribute("SessionSettings", Struct)
TURN_SESSION_SETTINGS: Attribute[TurnSessionSettings] = Attribute(
    "TurnSessionSettings", TurnSessionSettings
)
QUEUED_USER_MESSAGES: Channel[AgentUserMessage] = Channel("QueuedUserMessages", AgentUserMessage)
INTERRUPT_RESOLUTIONS: ChannelMap[AgentInterruptResolution] = ChannelMap(
    "InterruptResolutions", AgentInterruptResolution
)
TOOL_CALL_RESULTS: Channel[ToolCallCompleted] = Channel("ToolCallResults", ToolCallCompleted)
STEERED_USER_MESSAGES: Channel[AgentUserMessage] = Channel("SteeredUserMessages", AgentUserMessage)
TURN_CONTROL_REQUESTS: Channel[TurnControlRequest] = Channel(
    "TurnControlRequests", TurnControlRequest
)
TURN_CANCELLATION_REQUEST: Attribute[TurnCancellationRequest] = Attribute(
    "TurnCancellationRequest", TurnCancellationRequest
)
TOOL_CALL_CANCELLATIONS: ChannelMap[ToolCallCancellation] = ChannelMap(
    "ToolCallCancellations", ToolCallCancellation
)
AGENT_PLAN: Attribute[AgentPlan] = Attribute("AgentPlan", AgentPlan)
PLAN_EXECUTIONS: ChannelMap[PlanExecutionRequest] = ChannelMap(
    "PlanExecutions", PlanExecutionRequest
)
PENDING_PLAN_EXECUTION: Attribute[PlanExecutionRequest] = Attribute(
    "PendingPlanExecution", PlanExecutionRequest
)
CONTEXT_SUMMARY: Attribute[ContextSummary] = Attribute("ContextSummary", ContextSummary)
AGENT_TRACE_CONTEXT: Attribute[str] = Attribute("AgentTraceContext", str)
"""The traceparent of the current activation's root; only written with tracing enabled."""
CLIENT_REQUESTS: AttributeMap[ClientRequestRecord] = AttributeMap(
    "ClientRequests", ClientRequestRecord
)
"""Key: a client request ID. The true answers of mutating RPCs, kept for a window
(session/_rpcs/client_requests.py); only those RPCs load and write it."""


@dataclass(frozen=True)
class SessionSchema:
    """Every Attribute, Channel and Stream one session Flow type owns."""

    state: Attribute[AgentState]
    messages: AttributeMap[AgentMessage]
    message_chunks: AttributeMap[AgentMessageChunk]
    message_index: Attribute[AgentMessageIndex]
    turn_reply_sequence: Attribute[TurnReplySequence]
    framework_run_state: Attribute[str]
    tool_calls: AttributeMap[AgentToolCall]
    next_tool_calls: AttributeMap[ToolCallDeferredPayload]
    pending_interrupts: Attribute[list[AgentInterrupt]]
    usage: Attribute[AgentUsage]
    session_settings: Attribute[Struct]
    turn_session_settings: Attribute[TurnSessionSettings]
    queued_user_messages: Channel[AgentUserMessage]
    interrupt_resolutions: ChannelMap[AgentInterruptResolution]
    tool_call_results: Channel[ToolCallCompleted]
    steered_user_messages: Channel[AgentUserMessage]
    turn_control_requests: Channel[TurnControlRequest]
    turn_cancellation_request: Attribute[TurnCancellationRequest]
    tool_call_cancellations: ChannelMap[ToolCallCancellation]
    plan: Attribute[AgentPlan]
    plan_executions: ChannelMap[PlanExecutionRequest]
    pending_plan_execution: Attribute[PlanExecutionRequest]
    context_summary: Attribute[ContextSummary]
    trace_context: Attribute[str]
    client_requests: AttributeMap[ClientRequestRecord]
    events: Stream[AgentEvent]

    @staticmethod
    def create(event_stream_capacity_bytes: int) -> SessionSchema:
        return SessionSchema(
            state=AGENT_STATE,
            messages=AGENT_MESSAGES,
            message_chunks=AGENT_MESSAGE_CHUNKS,
            message_index=AGENT_MESSAGE_INDEX,
            turn_reply_sequence=TURN_REPLY_SEQUENCE,
            framework_run_state=FRAMEWORK_RUN_STATE,
            tool_calls=AGENT_TOOL_CALLS,
            next_tool_calls=NEXT_TOOL_CALLS,
            pending_interrupts=PENDING_INTERRUPTS,
            usage=AGENT_USAGE,
            session_settings=SESSION_SETTINGS,
            turn_session_settings=TURN_SESSION_SETTINGS,
            queued_user_messages=QUEUED_USER_MESSAGES,
            interrupt_resolutions=INTERRUPT_RESOLUTIONS,
            tool_call_results=TOOL_CALL_RESULTS,
            steered_user_messages=STEERED_USER_MESSAGES,
            turn_control_requests=TURN_CONTROL_REQUESTS,
            turn_cancellation_request=TURN_CANCELLATION_REQUEST,
            tool_call_cancellations=TOOL_CALL_CANCELLATIONS,
            plan=AGENT_PLAN,
            plan_executions=PLAN_EXECUTIONS,
            pending_plan_execution=PENDING_PLAN_EXECUTION,
            context_summary=CONTEXT_SUMMARY,
            trace_context=AGENT_TRACE_CONTEXT,
            client_requests=CLIENT_REQUESTS,
            events=Stream("AgentEvents", AgentEvent, event_stream_capacity_bytes),
        )

    def persistence_schema(self) -> PersistenceSchema:
        return PersistenceSchema.of(
            self.state,
            self.messages,
            self.message_chunks,
            self.message_index,
            self.turn_reply_sequence,
            self.framework_run_state,
            self.tool_calls,
            self.next_tool_calls,
            self.pending_interrupts,
            self.usage,
            self.session_settings,
            self.turn_session_settings,
            self.queued_user_messages,
            self.interrupt_resolutions,
            self.tool_call_results,
            self.steered_user_messages,
            self.turn_control_requests,
            self.turn_cancellation_request,
            self.tool_call_cancellations,
            self.plan,
            self.plan_executions,
            self.pending_plan_execution,
            self.context_summary,
            self.trace_context,
            self.client_requests,
            self.events,
        )
