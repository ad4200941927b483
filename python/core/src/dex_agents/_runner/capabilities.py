"""The optional runner capabilities, each a protocol the session checks with `isinstance`.

A runner implements only the ones its framework supports: storing an
unfinished turn's items, polling and cancelling long tool tasks, summarizing
older context, planning turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeAlias, runtime_checkable

from dex_agents_contracts import (
    AgentMessage,
    AgentToolCall,
    ContextSummary,
    QuestionAnswer,
    RunnerContextSummary,
)

from dex_agents._runner.awaitables import MaybeAwaitable
from dex_agents._runner.values import (
    AgentTurnContext,
    FrameworkMessage,
    Heartbeat,
    ToolExecutionResult,
    ToolInputRequested,
)
from dex_agents.events import EventWriter


@runtime_checkable
class UnfinishedTurnMessageBuilder(Protocol):
    """Stores a turn's unstored items when it ends without an answer.

    The method may be a coroutine function, as RemoteRunner's is.
    """

    def build_unfinished_turn_messages(
        self, turn: AgentTurnContext
    ) -> MaybeAwaitable[Sequence[FrameworkMessage]]: ...


@dataclass(frozen=True, kw_only=True)
class ToolTaskPending:
    """The task still runs; poll again after the interval."""

    poll_interval_seconds: float
    continuation: str | None = None


@dataclass(frozen=True, kw_only=True)
class _TaskAttempt:
    """What names one Step attempt on a started task: the call, its key, the attempt."""

    flow_id: str
    tool_call: AgentToolCall
    idempotency_key: str
    attempt: int
    heartbeat: Heartbeat


@dataclass(frozen=True, kw_only=True)
class ToolTaskPoll(_TaskAttempt):
    """One poll of a started task."""

    input_answers: Sequence[QuestionAnswer]
    events: EventWriter
    pending_answer: QuestionAnswer | None = None


ToolTaskPollOutcome: TypeAlias = ToolExecutionResult | ToolInputRequested | ToolTaskPending


@runtime_checkable
class ToolTaskPoller(Protocol):
    async def poll_tool_task(self, poll: ToolTaskPoll) -> ToolTaskPollOutcome: ...


@dataclass(frozen=True, kw_only=True)
class ToolTaskCancellation(_TaskAttempt):
    """A best-effort cancel of a task that cancel_turn abandoned; idempotent by task_id."""


@runtime_checkable
class ToolTaskCanceller(Protocol):
    async def cancel_tool_task(self, cancellation: ToolTaskCancellation) -> None: ...


@dataclass(frozen=True, kw_only=True)
class ContextSummaryRequest:
    flow_id: str
    turn_id: str
    attempt: int
    previous_summary: ContextSummary | None
    messages: Sequence[AgentMessage]
    through_sequence: int
    events: EventWriter
    heartbeat: Heartbeat
    input_token_budget: int
    session_settings: Mapping[str, object] = field(default_factory=dict)


ContextSummaryResult: TypeAlias = RunnerContextSummary
"""The summary's text, its model call's usage and metadata (runner.proto's message)."""


@runtime_checkable
class ContextCompactionRunner(Protocol):
    """The estimate and the cutoff may be coroutine functions, as RemoteRunner's are."""

    def estimate_input_tokens(self, turn: AgentTurnContext) -> MaybeAwaitable[int]: ...

    def select_compaction_cutoff(
        self, turn: AgentTurnContext, retained_token_budget: int
    ) -> MaybeAwaitable[int | None]: ...

    async def summarize_context(self, request: ContextSummaryRequest) -> ContextSummaryResult: ...


@runtime_checkable
class PlanModeRunner(Protocol):
    @property
    def supports_plan_mode(self) -> bool: ...
