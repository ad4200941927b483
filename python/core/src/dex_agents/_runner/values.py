"""The values that cross the runner protocol (see `dex_agents.runner`).

The values a runner returns (messages, outcomes, deferred calls, tool results)
are runner.proto's generated messages under the protocol's names, so an
in-process runner, RemoteRunner and the TypeScript sidecar share one definition
and the remote path forwards them without copying. Three kinds stay written
here: the turn context and the tool execution carry the event writer and
heartbeat callbacks (their wire forms are `RunnerTurnContext` and
`ExecuteDeferredToolCallRequest`, mapped in `dex_agents._remote.frames`); a
tool failure the model sees is an exception (`ToolExecutionError`), the Python
way to end a call; a started task's poll interval is in seconds, the unit of the
session's timers (the wire carries milliseconds); and a question
(`ToolInputRequested`) defaults to allowing free text, where the generated class
defaults to false.

One generated default differs from the protocol's: a message field such as
`usage` is None when unset, so read an outcome's usage with `usage_of`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeAlias

from dex_agents_contracts import (
    AgentMessage,
    AgentPlan,
    AgentToolCall,
    AgentUsage,
    ContextSummary,
    InteractionMode,
    QuestionAnswer,
    RunnerDeferredToolCall,
    RunnerFrameworkMessage,
    RunnerModelCallMetadata,
    RunnerToolCallsRequested,
    RunnerToolResult,
    RunnerTurnCompleted,
    RunnerTurnContinued,
    ToolCallStatus,
    ToolEffect,
)

from dex_agents._runner.policies import (
    BuiltInToolName,
    ResolvedToolPolicy,
    ToolPolicy,
    resolve_tool_policy,
)
from dex_agents.events import EventWriter

Heartbeat: TypeAlias = Callable[[], Awaitable[None]]
"""Tells Dex the Step attempt is alive; a tool Step awaits one before the tool runs."""

# --- the values: runner.proto's generated messages --------------------------------

FrameworkMessage: TypeAlias = RunnerFrameworkMessage
"""A message a runner hands the session to store: the `AgentMessage` projection.

The session assigns sequence, turn and time (`message_record`); `framework_item`
is the framework's own JSON, replayed to it unchanged on later turns.
"""

ModelCallMetadata: TypeAlias = RunnerModelCallMetadata
"""Names and annotates a model call's chat span; never stored."""

DeferredToolCall: TypeAlias = RunnerDeferredToolCall
"""A tool call the model asked for, its policy resolved, which the session runs in its own Step.

`tool_call_id` is non-empty, without `/` and unique within the turn; `arguments`
is JSON text; `tool_source_reference` is opaque text a tool source needs to call
the tool without a listing (MCP). `ToolRouter` builds them.
"""

TurnCompleted: TypeAlias = RunnerTurnCompleted
"""The model answered: the turn ends (`turn_error` ends it as failed, without a retry)."""

ToolCallsRequested: TypeAlias = RunnerToolCallsRequested
"""The model asked for tools: the session runs them, then resumes the turn.

`new_messages` are stored now; a runner that sets them implements
`UnfinishedTurnMessageBuilder`.
"""

TurnContinued: TypeAlias = RunnerTurnContinued
"""Make another model call in the same turn (for example after a continuation)."""

AgentTurnOutcome: TypeAlias = TurnCompleted | ToolCallsRequested | TurnContinued


def deferred_tool_call(
    *,
    tool_call_id: str,
    tool_name: str,
    arguments: str,
    policy: ResolvedToolPolicy,
    tool_source_reference: str | None = None,
) -> DeferredToolCall:
    """A `DeferredToolCall` with the effect and approval of a resolved policy."""
    return DeferredToolCall(
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        arguments=arguments,
        effect=policy.effect,
        requires_approval=policy.requires_approval,
        tool_source_reference=tool_source_reference,
    )


def usage_of(outcome: TurnCompleted | ToolCallsRequested | TurnContinued) -> AgentUsage:
    """The outcome's usage; an outcome that set none made no counted model call."""
    return outcome.usage if outcome.usage is not None else AgentUsage()


# --- the turn context -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AgentTurnContext:
    """What `run_model_step` sees: the stored conversation and the turn's state."""

    flow_id: str
    turn_id: str
    attempt: int
    """One-based attempt of the RunModel Step."""
    messages: Sequence[AgentMessage]
    """Stored messages, oldest first (after the context summary, with compaction)."""
    framework_run_state: str | None
    """Set while the turn continues after tool calls or a continuation."""
    tool_calls: Sequence[AgentToolCall]
    """The turn's tool call records; all final when RunModel runs."""
    tool_policies: Mapping[str, ToolPolicy]
    default_tool_effect: ToolEffect
    events: EventWriter
    heartbeat: Heartbeat
    enabled_built_in_tools: tuple[BuiltInToolName, ...] = ()
    session_settings: Mapping[str, object] = field(default_factory=dict)
    """The settings the turn started with (`{}` when none)."""
    interaction_mode: InteractionMode = InteractionMode.CHAT
    plan: AgentPlan | None = None
    context_summary: ContextSummary | None = None

    def resolve_tool_policy(
        self,
        tool_name: str,
        framework_effect: ToolEffect | None = None,
        *,
        framework_requires_approval: bool | None = None,
    ) -> ResolvedToolPolicy:
        """The session's `tool_policies` win over what the framework declares."""
        return resolve_tool_policy(
            tool_name,
            tool_policies=self.tool_policies,
            framework_effect=framework_effect,
            default_effect=self.default_tool_effect,
            framework_requires_approval=framework_requires_approval,
        )


# --- tool execution ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DeferredToolExecution:
    """One attempt of a tool Step: run the real tool once."""

    flow_id: str
    turn_id: str
    tool_call: AgentToolCall
    idempotency_key: str
    """`<flowId>/<turnId>/<toolCallId>`, the same on every attempt."""
    attempt: int
    events: EventWriter
    heartbeat: Heartbeat
    save_heartbeat_checkpoint: Callable[[str], Awaitable[None]]
    """Saves a handle (e.g. a started task) that a retried attempt reads back."""
    heartbeat_checkpoint: str | None = None
    """The checkpoint an earlier attempt of this Step saved, if any."""
    input_answers: Sequence[QuestionAnswer] = ()
    supports_tool_tasks: bool = False
    """Whether the runner polls tasks (`ToolTaskPoller`); without it, finish inside the call."""


ToolExecutionResult: TypeAlias = RunnerToolResult
"""The tool's output, shown to the model as is."""


class ToolExecutionError(Exception):
    """A tool failure the model should see; recorded `failed`, never retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[type[ToolExecutionError], tuple[str]]:
        return (type(self), (self.message,))


@dataclass(frozen=True, kw_only=True)
class ToolInputRequested:
    """The tool needs the user's answer before it takes any effect.

    Written here, not runner.proto's `RunnerToolInputRequested`: a question
    allows a free-text answer unless it says otherwise, and the generated class
    defaults `allows_free_text` to false (the wire's true lives in the codec),
    so a question built without it would silently refuse free text.
    """

    question: str
    choices: Sequence[str] = ()
    allows_free_text: bool = True
    continuation: str | None = None
    """Opaque text the next attempt needs to resume the question's request."""


@dataclass(frozen=True, kw_only=True)
class ToolTaskStarted:
    """The tool started remote work that `PollToolTask` follows."""

    task_id: str
    poll_interval_seconds: float


DeferredToolOutcome: TypeAlias = ToolExecutionResult | ToolInputRequested | ToolTaskStarted


# --- what the session stores for them ---------------------------------------------


def message_record(
    message: FrameworkMessage, *, sequence: int, turn_id: str, created_at: datetime
) -> AgentMessage:
    """The `AgentMessage` the session stores for `message`.

    The session's message store and every offline driver build it here, so the
    projection cannot drift between them.
    """
    return AgentMessage(
        sequence=sequence,
        turn_id=turn_id,
        role=message.role,
        text=message.text,
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        tool_arguments=message.tool_arguments,
        tool_output=message.tool_output,
        framework_item=message.framework_item,
        created_at=created_at,
    )


def pending_record(call: DeferredToolCall, *, turn_id: str, deferral_order: int) -> AgentToolCall:
    """The `AgentToolCalls` record RunModel stores for `call` before it runs.

    The session and every offline driver build records here, so their fields
    (and the design's non-zero defaults) cannot drift apart.
    """
    return AgentToolCall(
        tool_call_id=call.tool_call_id,
        turn_id=turn_id,
        tool_name=call.tool_name,
        arguments=call.arguments,
        effect=call.effect,
        requires_approval=call.requires_approval,
        status=(
            ToolCallStatus.AWAITING_APPROVAL if call.requires_approval else ToolCallStatus.APPROVED
        ),
        deferral_order=deferral_order,
        tool_source_reference=call.tool_source_reference,
        input_allows_free_text=True,
    )


def policy_of(call: DeferredToolCall) -> ResolvedToolPolicy:
    """The effect and approval `call` runs with, as one value."""
    return ResolvedToolPolicy(effect=call.effect, requires_approval=call.requires_approval)
