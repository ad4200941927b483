"""Session factories for the steering and cancellation tests (see FactoryScenario).

Each takes the JSON config the test wrote and builds the same Flow in the test
and in the Worker child.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ToolExecutionResult,
    TurnCompleted,
    TurnContinued,
)
from dex_agents.session._runtime import SessionRuntime
from dex_agents_contracts import AgentUsage, MessageRole
from dex_agents_testing import RunLog, ScriptedRunner

__all__ = ["continuing_flow", "earlier_worker_flow", "note_only_flow"]

_GATE_POLL_SECONDS = 0.02


async def _wait_for_file(path: str) -> None:
    while not await asyncio.to_thread(Path(path).exists):  # noqa: ASYNC110 - crosses processes
        await asyncio.sleep(_GATE_POLL_SECONDS)


def _user_message(text: str) -> FrameworkMessage:
    return FrameworkMessage(
        role=MessageRole.USER, text=text, framework_item=json.dumps({"role": "user", "text": text})
    )


class ContinuingRunner:
    """Turn 1's first model call continues the turn (TurnContinued) once its gate opens.

    So the next RunModel of the same turn starts after the call, and a steer or
    cancel that committed during the call meets RunModel's own check.
    """

    def __init__(self, gate: str, log: RunLog) -> None:
        self.gate = gate
        self.log = log

    def build_user_message(self, text: str) -> FrameworkMessage:
        return _user_message(text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        self.log.append(
            "model",
            turn=turn.turn_id,
            run_state=turn.framework_run_state,
            seen=[m.text for m in turn.messages],
        )
        usage = AgentUsage(model_calls=1, input_tokens=3, output_tokens=2)
        if turn.turn_id == "turn-1" and turn.framework_run_state is None:
            try:
                await _wait_for_file(self.gate)
            except asyncio.CancelledError:
                # cancel_turn cancels this coroutine; the log shows it did not run on.
                self.log.append("model_cancelled", turn=turn.turn_id)
                raise
            return TurnContinued(framework_run_state='{"continued":1}', usage=usage)
        text = f"answer to {turn.messages[-1].text}"
        return TurnCompleted(
            new_messages=[
                FrameworkMessage(
                    role=MessageRole.ASSISTANT,
                    text=text,
                    framework_item=json.dumps({"role": "assistant", "text": text}),
                )
            ],
            usage=usage,
        )

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> ToolExecutionResult:
        raise AssertionError("this runner requests no tools")


def continuing_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    runner = ContinuingRunner(config["gate"], RunLog(config["log_path"]))
    return AgentSessionFlow(runner, flow_type=config["flow_type"])


class NoteOnlyRunner:
    """A ScriptedRunner without build_unfinished_turn_messages: steered turns get the note."""

    def __init__(self, inner: ScriptedRunner) -> None:
        self._inner = inner

    def build_user_message(self, text: str) -> FrameworkMessage:
        return self._inner.build_user_message(text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        return await self._inner.run_model_step(turn)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        return await self._inner.execute_deferred_tool_call(call)


def note_only_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    inner = ScriptedRunner.from_json(
        {"script": config["script"], "tools": config["tools"], "log": config["log_path"]}
    )
    return AgentSessionFlow(NoteOnlyRunner(inner), flow_type=config["flow_type"])


def scripted_config(runner: ScriptedRunner) -> dict[str, Sequence[Any]]:
    """The script and tools of `runner` as FactoryScenario config."""
    data = runner.to_json()
    return {"script": data["script"], "tools": data["tools"]}


class _EarlierWorkerRuntime(SessionRuntime):
    """Starts turns as a Worker without steering would: accepts_turn_control stays false."""

    async def begin_turn(self, *args: Any, **kwargs: Any) -> bool:
        started = await super().begin_turn(*args, **kwargs)
        context, state = args[0], args[1]
        state.accepts_turn_control = False
        self.schema.state.set(context, state)
        return started


class _EarlierWorkerFlow(AgentSessionFlow):
    runtime_type = _EarlierWorkerRuntime


def earlier_worker_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    """A session whose turns a pre-steering Worker started (a mixed rollout)."""
    runner = ContinuingRunner(config["gate"], RunLog(config["log_path"]))
    return _EarlierWorkerFlow(runner, flow_type=config["flow_type"])
