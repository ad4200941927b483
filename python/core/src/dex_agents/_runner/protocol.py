"""The runner protocol and the plain data that crosses it (see `dex_agents.runner`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, Literal, Protocol, TypeAlias, runtime_checkable

from dex_agents_contracts import (
    AgentMessage,
    AgentPlan,
    AgentToolCall,
    AgentUsage,
    ContextSummary,
    InteractionMode,
    MessageRole,
    QuestionAnswer,
    ToolCallStatus,
    ToolEffect,
)
from typing_extensions import TypeVar

from dex_agents._runner.awaitables import MaybeAwaitable
from dex_agents._runner.policies import (
    BuiltInToolName,
    ResolvedToolPolicy,
    ToolPolicy,
    resolve_tool_policy,
)
from dex_agents.events import EventWriter

Heartbeat: TypeAlias = Callable[[], Awaitable[None]]
"""Tells Dex the Step attempt is alive; a tool Step awaits one before the tool runs."""

# --- messages and metadata --------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FrameworkMessage:
    """A message a runner hands the session to store: the `AgentMessage` projection.

    The session assigns sequence, turn and time; `framework_item` is the
    framework's own JSON, replayed to it unchanged on later turns.
    """

    role: Literal["user", "assistant", "tool"]
    framework_item: str
    text: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_output: str | None = None

    @property
    def message_role(self) -> MessageRole:
        return {
            "user": MessageRole.USER,
            "assistant": MessageRole.ASSISTANT,
            "tool": MessageRole.TOOL,
        }[self.role]

    def stored(self, *, sequence: int, turn_id: str, created_at: datetime) -> AgentMessage:
        """The `AgentMessage` the session stores for this message.

        The session's message store and every offline driver build it here, so
        the projection cannot drift between them.
        """
        return AgentMessage(
            sequence=sequence,
            turn_id=turn_id,
            role=self.message_role,
            text=self.text,
            tool_call_id=self.tool_call_id,
            tool_name=self.tool_name,
            tool_arguments=self.tool_arguments,
            tool_output=self.tool_output,
            framework_item=self.framework_item,
            created_at=created_at,
        )


@dataclass(frozen=True, kw_only=True)
class ModelCallMetadata:
    """Names and annotates a model call's chat span; never stored."""

    request_model: str | None = None
    response_model: str | None = None
    provider_name: str | None = None
    response_id: str | None = None
    finish_reasons: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class DeferredToolCall:
    """A tool call the model asked for, which the session runs in its own Step."""

    tool_call_id: str
    """Non-empty, without `/`, unique within the turn."""
    tool_name: str
    arguments: str
    """JSON text of the arguments."""
    policy: ResolvedToolPolicy
    tool_source_reference: str | None = None
    """Opaque text a tool source needs to call the tool without a listing (MCP)."""

    def pending_record(self, *, turn_id: str, deferral_order: int) -> AgentToolCall:
        """The `AgentToolCalls` record RunModel stores for this call before it runs.

        The session and every offline driver build records here, so their
        fields (and the design's non-zero defaults) cannot drift apart.
        """
        return AgentToolCall(
            tool_call_id=self.tool_call_id,
            turn_id=turn_id,
            tool_name=self.tool_name,
            arguments=self.arguments,
            effect=self.policy.effect,
            requires_approval=self.policy.requires_approval,
            status=(
                ToolCallStatus.AWAITING_APPROVAL
                if self.policy.requires_approval
                else ToolCallStatus.APPROVED
            ),
            deferral_order=deferral_order,
            tool_source_reference=self.tool_source_reference,
            input_allows_free_text=True,
        )


# --- outcomes of one model Step ---------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TurnCompleted:
    """The model answered: the turn ends."""

    new_messages: Sequence[FrameworkMessage]
    """Turn items the session has not stored yet."""
    usage: AgentUsage = field(default_factory=AgentUsage)
    model_call_metadata: ModelCallMetadata | None = None
    turn_error: str | None = None
    """Ends the turn as failed, without a retry."""


@dataclass(frozen=True, kw_only=True)
class ToolCallsRequested:
    """The model asked for tools: the session runs them, then resumes the turn."""

    framework_run_state: str
    """Opaque JSON the runner needs to continue the turn."""
    tool_calls: Sequence[DeferredToolCall]
    usage: AgentUsage = field(default_factory=AgentUsage)
    new_messages: Sequence[FrameworkMessage] = ()
    """Items stored now; a runner that sets them implements `UnfinishedTurnMessageBuilder`."""
    model_call_metadata: ModelCallMetadata | None = None


@dataclass(frozen=True, kw_only=True)
class TurnContinued:
    """Make another model call in the same turn (for example after a continuation)."""

    framework_run_state: str
    new_messages: Sequence[FrameworkMessage] = ()
    usage: AgentUsage = field(default_factory=AgentUsage)
    model_call_metadata: ModelCallMetadata | None = None


AgentTurnOutcome: TypeAlias = TurnCompleted | ToolCallsRequested | TurnContinued


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


@dataclass(frozen=True, kw_only=True)
class ToolExecutionResult:
    """The tool's output, shown to the model as is."""

    output: str


class ToolExecutionError(Exception):
    """A tool failure the model should see; recorded `failed`, never retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[type[ToolExecutionError], tuple[str]]:
        return (type(self), (self.message,))


@dataclass(frozen=True, kw_only=True)
class ToolInputRequested:
    """The tool needs the user's answer before it takes any effect."""

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

ToolOutcomeT_co = TypeVar("ToolOutcomeT_co", covariant=True, default=ToolExecutionResult)


@runtime_checkable
class AgentFrameworkRunner(Protocol, Generic[ToolOutcomeT_co]):
    """A framework adapter: one model call per Step, tools deferred to their own Steps."""

    def build_user_message(self, text: str) -> MaybeAwaitable[FrameworkMessage]:
        """The framework's user message for `text`.

        A plain method for a runner in this process; a runner that must ask another
        process (RemoteRunner) makes it a coroutine function, and the session awaits it.
        """
        ...

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        """Make at most one model call; run no tool that can be deferred."""
        ...

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolOutcomeT_co:
        """Run the real tool once; raise ToolExecutionError for a failure the model sees."""
        ...
