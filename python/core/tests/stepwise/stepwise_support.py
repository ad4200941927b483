"""Shared doubles for the Stepwise tests (imported by module name; pytest puts this
directory on `sys.path`): a recording event writer and a tiny session.

`FakeSession` does what the session Flow does around `run_model_step` (stores the
user message and returned messages, keeps the run state, records tool calls), so
the tests drive whole turns without Dex.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from dex_agents.offline import RecordingEventWriter, no_checkpoint, no_heartbeat, stored_message
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    BuiltInToolName,
    DeferredToolCall,
    DeferredToolExecution,
    FrameworkMessage,
    ToolExecutionError,
    ToolPolicy,
    TurnCompleted,
    TurnContinued,
)
from dex_agents.stepwise import StepwiseRunner
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

T = TypeVar("T")


def run(awaitable: Awaitable[T]) -> T:
    """Runs one coroutine; the suite has no async pytest plugin."""

    async def main() -> T:
        return await awaitable

    return asyncio.run(main())


@dataclass
class FakeSession:
    """The session Flow's bookkeeping around the runner, in memory."""

    runner: StepwiseRunner
    flow_id: str = "session-1"
    messages: list[AgentMessage] = field(default_factory=list)
    tool_calls: list[AgentToolCall] = field(default_factory=list)
    run_state: str | None = None
    turn_number: int = 0
    events: RecordingEventWriter = field(default_factory=RecordingEventWriter)
    tool_policies: Mapping[str, ToolPolicy] = field(default_factory=dict)
    default_tool_effect: ToolEffect = ToolEffect.UNCLASSIFIED
    enabled_built_in_tools: tuple[BuiltInToolName, ...] = ()
    session_settings: Mapping[str, object] = field(default_factory=dict)
    interaction_mode: InteractionMode = InteractionMode.CHAT
    plan: AgentPlan | None = None
    context_summary: ContextSummary | None = None
    usage: list[AgentUsage] = field(default_factory=list)

    @property
    def turn_id(self) -> str:
        return f"turn-{self.turn_number}"

    def store(self, new: Sequence[FrameworkMessage]) -> None:
        for message in new:
            self.messages.append(stored_message(message, len(self.messages) + 1, self.turn_id))

    def start_turn(self, text: str) -> None:
        self.turn_number += 1
        self.tool_calls = []
        self.run_state = None
        self.store([self.runner.build_user_message(text)])

    def context(self, *, attempt: int = 1) -> AgentTurnContext:
        return AgentTurnContext(
            flow_id=self.flow_id,
            turn_id=self.turn_id,
            attempt=attempt,
            messages=tuple(self.messages),
            framework_run_state=self.run_state,
            tool_calls=tuple(self.tool_calls),
            tool_policies=self.tool_policies,
            default_tool_effect=self.default_tool_effect,
            events=self.events,
            heartbeat=no_heartbeat,
            enabled_built_in_tools=self.enabled_built_in_tools,
            session_settings=self.session_settings,
            interaction_mode=self.interaction_mode,
            plan=self.plan,
            context_summary=self.context_summary,
        )

    def model_step(self) -> AgentTurnOutcome:
        """One RunModel Step, applied as the session applies its outcome."""
        outcome = run(self.runner.run_model_step(self.context()))
        self.usage.append(outcome.usage)
        if isinstance(outcome, TurnCompleted):
            self.store(outcome.new_messages)
            self.run_state = None
        elif isinstance(outcome, TurnContinued):
            self.store(outcome.new_messages)
            self.run_state = outcome.framework_run_state
        else:
            self.store(outcome.new_messages)
            self.run_state = outcome.framework_run_state
            order = len(self.tool_calls)
            for index, call in enumerate(outcome.tool_calls):
                self.tool_calls.append(pending_record(call, self.turn_id, order + index))
        return outcome

    def finish(
        self,
        tool_call_id: str,
        status: ToolCallStatus,
        *,
        output: str | None = None,
        error: str | None = None,
        rejection_message: str | None = None,
    ) -> None:
        """Makes one record final, as a tool or approval Step would."""
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
        raise KeyError(tool_call_id)

    def execute(self, tool_call_id: str, *, attempt: int = 1) -> None:
        """One tool Step: runs the tool and records its final status."""
        record = next(r for r in self.tool_calls if r.tool_call_id == tool_call_id)
        execution = DeferredToolExecution(
            flow_id=self.flow_id,
            turn_id=self.turn_id,
            tool_call=record,
            idempotency_key=f"{self.flow_id}/{self.turn_id}/{tool_call_id}",
            attempt=attempt,
            events=self.events,
            heartbeat=no_heartbeat,
            save_heartbeat_checkpoint=no_checkpoint,
        )
        try:
            result = run(self.runner.execute_deferred_tool_call(execution))
        except ToolExecutionError as error:
            self.finish(tool_call_id, ToolCallStatus.FAILED, error=error.message)
        else:
            self.finish(tool_call_id, ToolCallStatus.SUCCEEDED, output=result.output)


def pending_record(call: DeferredToolCall, turn_id: str, order: int) -> AgentToolCall:
    return call.pending_record(turn_id=turn_id, deferral_order=order)
