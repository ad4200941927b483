"""Test doubles for a `PydanticAiRunner` without Dex: a recording event writer and
an in-memory session.

`FakeSession` does the session Flow's bookkeeping around the runner (stores the
user message and returned messages, keeps the run state, records tool calls and
their final status), so a test drives whole turns of an application's agent, with
Pydantic AI's `FunctionModel` or `TestModel`, and no Dex server. It does not run
Steps, retries or approvals: integration tests against dexlite cover those.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from dex_agents import (
    AgentTurnContext,
    AgentTurnOutcome,
    BuiltInToolName,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    Heartbeat,
    ToolCallsRequested,
    ToolExecutionResult,
    ToolPolicy,
    TurnCompleted,
    TurnContinued,
)
from dex_agents.offline import RecordingEventWriter, no_checkpoint, no_heartbeat, stored_message
from dex_agents_contracts import AgentMessage, AgentToolCall, ToolCallStatus, ToolEffect

from dex_agents_pydantic_ai._runner import PydanticAiRunner

__all__ = ["FakeSession", "RecordingEventWriter", "run"]

T = TypeVar("T")


def run(awaitable: Coroutine[Any, Any, T] | Awaitable[T]) -> T:
    """Runs one coroutine; the suite has no async pytest plugin."""

    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


@dataclass
class FakeSession:
    """The session Flow's bookkeeping around one runner, in memory."""

    runner: PydanticAiRunner[Any]
    flow_id: str = "session-1"
    messages: list[AgentMessage] = field(default_factory=list)
    tool_calls: list[AgentToolCall] = field(default_factory=list)
    run_state: str | None = None
    turn_number: int = 0
    events: RecordingEventWriter = field(default_factory=RecordingEventWriter)
    tool_policies: dict[str, ToolPolicy] = field(default_factory=dict)
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    enabled_built_in_tools: tuple[BuiltInToolName, ...] = ()
    """The built-ins the session enables; their calls are recorded like any other here."""
    heartbeat: Heartbeat = no_heartbeat
    """Given to every model Step and tool Step the session runs."""

    @property
    def turn_id(self) -> str:
        return f"turn-{self.turn_number}"

    def append(self, messages: list[FrameworkMessage] | tuple[FrameworkMessage, ...]) -> None:
        for m in messages:
            self.messages.append(stored_message(m, len(self.messages) + 1, self.turn_id))

    def start_turn(self, text: str) -> None:
        self.turn_number += 1
        self.tool_calls = []
        self.run_state = None
        self.append([self.runner.build_user_message(text)])

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
        )

    def run_model(self, attempt: int = 1) -> AgentTurnOutcome:
        outcome = run(self.runner.run_model_step(self.context(attempt)))
        if isinstance(outcome, TurnCompleted):
            self.append(list(outcome.new_messages))
            self.run_state = None
        elif isinstance(outcome, TurnContinued):
            self.append(list(outcome.new_messages))
            self.run_state = outcome.framework_run_state
        elif isinstance(outcome, ToolCallsRequested):
            self.append(list(outcome.new_messages))
            self.run_state = outcome.framework_run_state
            order = len(self.tool_calls)
            for i, call in enumerate(outcome.tool_calls):
                self.tool_calls.append(self._record(call, order + i))
        return outcome

    def _record(self, call: DeferredToolCall, order: int) -> AgentToolCall:
        return call.pending_record(turn_id=self.turn_id, deferral_order=order)

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
        record = self.record(tool_call_id)
        record.status = status
        record.output = output
        record.error = error
        record.rejection_message = rejection_message

    def execution(self, tool_call_id: str, attempt: int = 1) -> DeferredToolExecution:
        record = self.record(tool_call_id)
        return DeferredToolExecution(
            flow_id=self.flow_id,
            turn_id=self.turn_id,
            tool_call=record,
            idempotency_key=f"{self.flow_id}/{self.turn_id}/{tool_call_id}",
            attempt=attempt,
            events=self.events,
            heartbeat=self.heartbeat,
            save_heartbeat_checkpoint=no_checkpoint,
        )

    def execute(self, tool_call_id: str, attempt: int = 1) -> ToolExecutionResult:
        return run(self.runner.execute_deferred_tool_call(self.execution(tool_call_id, attempt)))

    def execute_and_record(self, tool_call_id: str) -> None:
        """Runs the call as a tool Step would, and records `succeeded`."""
        result = self.execute(tool_call_id)
        self.finish(tool_call_id, ToolCallStatus.SUCCEEDED, output=result.output)
