"""Stepwise session Flows for the integration tests, built by `flow(config)` in the test
and in the Worker child (FactoryScenario).

The model is rule based, so a restarted Worker answers the same way: each call
answers with one `ScriptedModelClient` entry chosen from the request's last user
command, and logs the request to the RunLog first. Token counts are the number of
`#` characters, so tests size messages exactly.

User commands (the text before the first space):
- `say`: answer `ok` plus `answer_tokens` `#`s.
- `tool:<id>`: call the read tool `lookup` (`tool_args_tokens` `#`s in its
  arguments, `tool_output_tokens` in its output), then answer.
- `continue:<n>`: answer `continuing <n>`; the continuation hook continues while
  fewer than n continuations happened in a row.
- `gate:<name>`: wait for the file `<gate_dir>/<name>` before answering; on the first
  attempt (marker file), fail after the gate opened.
- `fail-after-tool:<id>`: call `lookup`, then fail every model call after its result.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy
from dex_agents._runner.errors import RunStateError, TurnFailed
from dex_agents.models import (
    AssistantMessage,
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ScriptedModelClient,
    ScriptedResponse,
    ToolResultMessage,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.options import CompactionPolicy
from dex_agents.runner import (
    AgentTurnContext,
    AgentTurnOutcome,
    DeferredToolExecution,
    DeferredToolOutcome,
    FrameworkMessage,
    ToolCallsRequested,
)
from dex_agents.stepwise import (
    AgentDefinition,
    StepwiseRunner,
    TurnContinuation,
    TurnContinuationContext,
    TurnContinuationDecision,
    tool,
)
from dex_agents_contracts import ToolEffect
from dex_agents_testing import RunLog

__all__ = ["SUMMARY_INSTRUCTIONS", "flow"]

SUMMARY_INSTRUCTIONS = "SUMMARIZE"
CONTINUATION_MESSAGE = "go on"


def count_hashes(text: str) -> int:
    return text.count("#")


def _text(message: object) -> str:
    if isinstance(message, UserMessage | AssistantMessage):
        return message.text or ""
    if isinstance(message, ToolResultMessage):
        return message.output
    return ""


def _command(messages: Sequence[object]) -> str:
    """The last user text that is a command (not a continuation or a [Dex] note)."""
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            text = message.text
            if text != CONTINUATION_MESSAGE and not text.startswith("[Dex]"):
                return text.split(" ", 1)[0]
    return "say"


_AFTER_TOOL_FAILURES: dict[str, Exception | None] = {
    "tool": None,
    "fail-after-tool": RuntimeError("the model failed after the tool result"),
    "refuse-after-tool": TurnFailed("the framework refused to go on after the tool result"),
    "unreadable-after-tool": RunStateError("the stored run state is not this runner's"),
}
"""Commands whose first model call asks for a tool; the second raises this."""


class RuleModel:
    """A ModelClient answering by rules; one instance per Worker process."""

    def __init__(self, config: Mapping[str, Any], name: str) -> None:
        self._config = config
        self._name = name
        self._log = RunLog(str(config["log_path"]))
        self._gates = Path(str(config.get("gate_dir", "/nonexistent")))

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        summary = request.instructions == SUMMARY_INSTRUCTIONS
        messages = list(request.messages)
        command = _command(messages)
        self._log.append(
            "model_call",
            model=self._name,
            summary=summary,
            command=command,
            settings=dict(request.session_settings),
            texts=[_text(m) for m in messages],
            pid=os.getpid(),
        )
        entry = await (self._summary() if summary else self._turn(command, messages))
        return await ScriptedModelClient([entry], model_name=self._name).complete(request)

    async def _wait_gate(self, name: str) -> None:
        # The gate is a file another process creates, so there is no event to await.
        while not (self._gates / name).exists():  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    async def _summary(self) -> ScriptedResponse:
        gate = self._config.get("summary_gate")
        if gate:
            await self._wait_gate(str(gate))
        return scripted_answer(
            str(self._config.get("summary_text", "the summary")),
            usage=ModelUsage(input_tokens=7, output_tokens=3),
        )

    async def _turn(self, command: str, messages: Sequence[object]) -> ScriptedResponse:
        answer_tokens = int(self._config.get("answer_tokens", 0))
        last = messages[-1] if messages else None
        after_tool = isinstance(last, ToolResultMessage)
        name, _, argument = command.partition(":")
        if name in _AFTER_TOOL_FAILURES and not after_tool:
            query = "#" * int(self._config.get("tool_args_tokens", 0))
            return scripted_tool_calls((f"call-{argument}", "lookup", f'{{"q":"{query}"}}'))
        failure = _AFTER_TOOL_FAILURES.get(name)
        if failure is not None:
            raise failure
        if name == "continue":
            return scripted_answer(f"continuing {argument}")
        if name == "gate":
            await self._wait_gate(argument)
            marker = self._gates / f"{argument}.failed-once"
            if not marker.exists():
                marker.touch()
                raise RuntimeError("the first attempt fails after the gate")
        return scripted_answer(
            "ok " + "#" * answer_tokens, usage=ModelUsage(input_tokens=1, output_tokens=1)
        )


def _continuation(context: TurnContinuationContext) -> TurnContinuationDecision:
    text = context.text or ""
    if not text.startswith("continuing "):
        return None
    wanted = int(text.split(" ", 1)[1])
    if context.consecutive_continuations < wanted:
        return TurnContinuation(message=CONTINUATION_MESSAGE)
    return None


class WithoutUnfinishedBuilder:
    """A Stepwise runner that hides build_unfinished_turn_messages."""

    def __init__(self, inner: StepwiseRunner) -> None:
        self._inner = inner

    def build_user_message(self, text: str) -> FrameworkMessage:
        return self._inner.build_user_message(text)

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        return await self._inner.run_model_step(turn)

    async def execute_deferred_tool_call(self, call: DeferredToolExecution) -> DeferredToolOutcome:
        return await self._inner.execute_deferred_tool_call(call)


class IncrementalWithoutBuilder(WithoutUnfinishedBuilder):
    """Stores tool-call responses incrementally, yet has no unfinished-turn builder."""

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        outcome = await self._inner.run_model_step(turn)
        if isinstance(outcome, ToolCallsRequested):
            note = self._inner.build_user_message("stored early")
            return dataclasses.replace(outcome, new_messages=[note])
        return outcome


class FaultyUnfinishedBuilder(WithoutUnfinishedBuilder):
    """build_unfinished_turn_messages raises, or returns something that is not messages."""

    def __init__(self, inner: StepwiseRunner, mode: str) -> None:
        super().__init__(inner)
        self._mode = mode

    def build_unfinished_turn_messages(self, turn: AgentTurnContext) -> Sequence[FrameworkMessage]:
        if self._mode == "raise":
            raise RuntimeError("faulty build_unfinished_turn_messages")
        role: Any = "system"
        return [FrameworkMessage(role=role, text="bad", framework_item="{}")]


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    output = "#" * int(config.get("tool_output_tokens", 0))

    @tool
    def lookup(q: str = "") -> str:
        """Looks something up.

        Args:
            q: What to look up.
        """
        return output or "found"

    def resolve(settings: Mapping[str, object]) -> RuleModel:
        return RuleModel(config, str(settings.get("model", "default")))

    definition = AgentDefinition(
        model_resolver=resolve,
        tools=[lookup],
        decide_turn_continuation=_continuation,
        summary_instructions=SUMMARY_INSTRUCTIONS,
        count_tokens=count_hashes,
    )
    stepwise = StepwiseRunner(definition)
    runner: Any = stepwise
    wrapper = config.get("runner")
    if wrapper == "without_unfinished_builder":
        runner = WithoutUnfinishedBuilder(stepwise)
    elif wrapper == "incremental_without_builder":
        runner = IncrementalWithoutBuilder(stepwise)
    elif wrapper in ("faulty_builder_raise", "faulty_builder_bad"):
        runner = FaultyUnfinishedBuilder(stepwise, "raise" if wrapper.endswith("raise") else "bad")
    compaction = config.get("compaction")
    options = AgentSessionOptions(
        tool_policies={"lookup": ToolPolicy(effect=ToolEffect.READ)},
        message_window_size=int(config.get("message_window_size", 64)),
        message_chunk_size=int(config.get("message_chunk_size", 32)),
        compaction=CompactionPolicy(**compaction) if compaction else None,
        retained_message_limit=config.get("retained_message_limit", 1000),
    )
    return AgentSessionFlow(runner, flow_type=str(config["flow_type"]), options=options)
