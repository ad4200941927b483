"""Doubles for driving a runner without Dex: tests, benchmarks and adapter suites.

A runner's `run_model_step` and `execute_deferred_tool_call` take plain data
plus an event writer and heartbeat callbacks; these stand in for what the
session Flow passes, and `FakeSession` does the Flow's bookkeeping around them,
so an adapter's suite drives whole turns with no Dex server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import json
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from dex_agents_contracts import (
    AgentMessage,
    AgentPlan,
    AgentToolCall,
    AgentUsage,
    ContextSummary,
    InteractionMode,
    ToolCallStatus,
    ToolEffect,
)

from dex_agents._runner.policies import BuiltInToolName, ToolPolicy
from dex_agents._runner.protocol import AgentFrameworkRunner
from dex_agents._runner.values import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    FrameworkMessage,
    Heartbeat,
    ToolCallsRequested,
    ToolExecutionError,
    ToolExecutionResult,
    TurnCompleted,
    message_record,
    pending_record,
    usage_of,
)

__all__ = [
    "FakeSession",
    "NullEventWriter",
    "RecordingEventWriter",
    "no_checkpoint",
    "no_heartbeat",
    "run_sync",
    "stored_message",
]

T = TypeVar("T")
RunnerT = TypeVar("RunnerT", bound=AgentFrameworkRunner[Any])


@dataclass
class RecordingEventWriter:
    """An `EventWriter` that keeps `(event_type, payload)` pairs, in order.

    Contract payloads are kept as the message (named by their type unless
    `event_type` is given); raw adapter events as their parsed JSON.
    """

    events: list[tuple[str, object]] = field(default_factory=list)

    def write(self, payload: object, *, event_type: str | None = None) -> None:
        self.events.append((event_type or type(payload).__name__, payload))

    def write_raw(self, event_type: str, payload_json: str) -> None:
        self.events.append((event_type, json.loads(payload_json)))


class NullEventWriter:
    """An `EventWriter` that drops every event (benchmarks)."""

    def write(self, payload: object, *, event_type: str | None = None) -> None:
        return None

    def write_raw(self, event_type: str, payload_json: str) -> None:
        return None


async def no_heartbeat() -> None:
    """A heartbeat with nobody listening."""
    return None


async def no_checkpoint(_: str) -> None:
    """A `save_heartbeat_checkpoint` that keeps nothing."""
    return None


def run_sync(awaitable: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
    """Runs one awaitable to its end, for suites without an async pytest plugin."""

    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


def stored_message(
    message: FrameworkMessage,
    sequence: int,
    turn_id: str,
    *,
    created_at: datetime | None = None,
) -> AgentMessage:
    """The `AgentMessage` the session stores for `message` at `sequence` (now, by default)."""
    return message_record(
        message,
        sequence=sequence,
        turn_id=turn_id,
        created_at=created_at if created_at is not None else datetime.now(UTC),
    )


@dataclass
class FakeSession(Generic[RunnerT]):
    """The session Flow's bookkeeping around one runner, in memory.

    It stores the user message and returned messages, keeps the run state and
    records tool calls with their final status. It runs no Steps, retries,
    approvals, questions or tasks: integration tests against dexlite cover those.
    """

    runner: RunnerT
    flow_id: str = "session-1"
    messages: list[AgentMessage] = field(default_factory=list)
    tool_calls: list[AgentToolCall] = field(default_factory=list)
    run_state: str | None = None
    turn_number: int = 0
    events: RecordingEventWriter = field(default_factory=RecordingEventWriter)
    tool_policies: Mapping[str, ToolPolicy] = field(default_factory=dict)
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    enabled_built_in_tools: tuple[BuiltInToolName, ...] = ()
    """The built-ins the session enables; their calls are recorded like any other here."""
    heartbeat: Heartbeat = no_heartbeat
    """Given to every model Step and tool Step the session runs."""
    session_settings: Mapping[str, object] = field(default_factory=dict)
    interaction_mode: InteractionMode = InteractionMode.CHAT
    plan: AgentPlan | None = None
    context_summary: ContextSummary | None = None
    usage: list[AgentUsage] = field(default_factory=list)
    """Each model Step's usage, in order."""

    @property
    def turn_id(self) -> str:
        return f"turn-{self.turn_number}"

    def append(self, messages: Sequence[FrameworkMessage]) -> None:
        """Stores messages as the session does, numbered after the stored ones."""
        for message in messages:
            self.messages.append(stored_message(message, len(self.messages) + 1, self.turn_id))

    def start_turn(self, text: str) -> None:
        self.turn_number += 1
        self.tool_calls = []
        self.run_state = None
        message = self.runner.build_user_message(text)
        if inspect.isawaitable(message):
            message = run_sync(message)
        self.append([message])

    def context(self, attempt: int = 1) -> AgentTurnContext:
        return AgentTurnContext(
            flow_id=self.flow_id,
            turn_id=self.turn_id,
            attempt=attempt,
            messages=list(self.messages),
            framework_run_state=self.run_state,
            tool_calls=list(self.tool_calls),
            tool_policies=self.tool_policies,
            default_tool_effect=self.default_tool_effect,
            events=self.events,
            heartbeat=self.heartbeat,
            enabled_built_in_tools=self.enabled_built_in_tools,
            session_settings=self.session_settings,
            interaction_mode=self.interaction_mode,
            plan=self.plan,
            context_summary=self.context_summary,
        )

    def run_model(self, attempt: int = 1) -> AgentTurnOutcome:
        """One RunModel Step, applied as the session applies its outcome."""
        outcome = run_sync(self.runner.run_model_step(self.context(attempt)))
        self.usage.append(usage_of(outcome))
        self.append(outcome.new_messages)
        if isinstance(outcome, TurnCompleted):
            self.run_state = None
            return outcome
        self.run_state = outcome.framework_run_state
        if isinstance(outcome, ToolCallsRequested):
            order = len(self.tool_calls)
            for index, call in enumerate(outcome.tool_calls):
                self.tool_calls.append(
                    pending_record(call, turn_id=self.turn_id, deferral_order=order + index)
                )
        return outcome

    def record(self, tool_call_id: str) -> AgentToolCall:
        for record in self.tool_calls:
            if record.tool_call_id == tool_call_id:
                return record
        raise KeyError(f"the turn has no tool call {tool_call_id!r}")

    def finish(
        self,
        tool_call_id: str,
        status: ToolCallStatus,
        *,
        output: str | None = None,
        error: str | None = None,
        rejection_message: str | None = None,
    ) -> None:
        """Sets one record's status, as a tool or approval Step would."""
        # A new record, as the session stores one: earlier contexts keep what they saw.
        for index, record in enumerate(self.tool_calls):
            if record.tool_call_id == tool_call_id:
                self.tool_calls[index] = dataclasses.replace(
                    record,
                    status=status,
                    output=output,
                    error=error,
                    rejection_message=rejection_message,
                )
                return
        raise KeyError(f"the turn has no tool call {tool_call_id!r}")

    def execution(self, tool_call_id: str, attempt: int = 1) -> DeferredToolExecution:
        return DeferredToolExecution(
            flow_id=self.flow_id,
            turn_id=self.turn_id,
            tool_call=self.record(tool_call_id),
            idempotency_key=f"{self.flow_id}/{self.turn_id}/{tool_call_id}",
            attempt=attempt,
            events=self.events,
            heartbeat=self.heartbeat,
            save_heartbeat_checkpoint=no_checkpoint,
        )

    def execute(self, tool_call_id: str, attempt: int = 1) -> ToolExecutionResult:
        """One attempt of the call's tool Step, recording nothing.

        Raises:
            ToolExecutionError: As the runner raises it.
            TypeError: The runner asked a question or started a task.
        """
        execution = self.execution(tool_call_id, attempt)
        outcome = run_sync(self.runner.execute_deferred_tool_call(execution))
        if not isinstance(outcome, ToolExecutionResult):
            raise TypeError(f"FakeSession runs no questions or tasks; got {outcome!r}")
        return outcome

    def execute_and_record(self, tool_call_id: str, attempt: int = 1) -> None:
        """Runs the call as a tool Step would and records `succeeded`, or `failed` with the
        error the model sees."""
        try:
            result = self.execute(tool_call_id, attempt)
        except ToolExecutionError as error:
            self.finish(tool_call_id, ToolCallStatus.FAILED, error=error.message)
        else:
            self.finish(tool_call_id, ToolCallStatus.SUCCEEDED, output=result.output)
