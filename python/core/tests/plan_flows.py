"""Stepwise plan-mode sessions for the integration tests, built by `flow(config)` in the
test and in the Worker child (FactoryScenario).

The model is rule based, so a retried or restarted model call answers the same
way. It logs every request (kind `model_call`) and picks its answer from the
turn's user message (the last user text that is not a plan note):

- `plan:<a>,<b>,...`: write_todos with those tasks pending, then answer `planned`.
- `mixed`: call `lookup`, ask_user and write_todos (task `only`) at once, then answer.
- `clear`: write_todos with no tasks, then answer.
- `hold:<name>`: wait for the file `<gate_dir>/<name>`, then answer `held`.
- the plan approval note: write_todos with the first task completed and the rest
  in progress, then with every task completed, then answer `executed`.
- anything else: answer `ok`.

With `approval_gate`, building the approval message fails (the AwaitUserMessage
attempt fails and Dex retries it) until that file exists, so a test can act while
the approval's Execute has not committed.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy
from dex_agents.models import (
    ModelRequest,
    ModelResponse,
    NamedToolChoice,
    ScriptedModelClient,
    ScriptedResponse,
    ToolResultMessage,
    UserMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.runner import FrameworkMessage
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import ToolEffect
from dex_agents_testing import RunLog

__all__ = ["APPROVAL_PREFIX", "flow"]

APPROVAL_PREFIX = "[Dex] The user approved plan revision"
_NOTE_PREFIXES = ("[Dex] The current plan", "[Dex] There is no plan yet.")


def _is_note(text: str) -> bool:
    return text.startswith(_NOTE_PREFIXES)


def _texts(request: ModelRequest) -> list[str]:
    texts: list[str] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            texts.append(message.text)
        elif isinstance(message, ToolResultMessage):
            texts.append(message.output)
        else:
            texts.append(message.text or "")
    return texts


def _turn_message(request: ModelRequest) -> tuple[str, int]:
    """The turn's user text and how many tool results came after it."""
    results = 0
    for message in reversed(request.messages):
        if isinstance(message, ToolResultMessage):
            results += 1
        if isinstance(message, UserMessage) and not _is_note(message.text):
            return message.text, results
    return "", results


def _note_tasks(request: ModelRequest) -> list[str]:
    """The task contents the plan note shows, in order."""
    for message in request.messages:
        if isinstance(message, UserMessage) and _is_note(message.text):
            return [
                line.split("] ", 1)[1]
                for line in message.text.splitlines()
                if line.startswith("- [")
            ]
    return []


def _todos(*tasks: tuple[str, str]) -> str:
    return json.dumps({"todos": [{"content": c, "status": s} for c, s in tasks]})


class PlanModel:
    """A ModelClient answering by rules; one instance per Worker process."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self._log = RunLog(str(config["log_path"]))
        self._gates = Path(str(config.get("gate_dir", "/nonexistent")))

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        text, results = _turn_message(request)
        choice = request.tool_choice
        self._log.append(
            "model_call",
            command=text,
            texts=_texts(request),
            tools=[t.name for t in request.tools],
            tool_choice=choice.name if isinstance(choice, NamedToolChoice) else choice,
            pid=os.getpid(),
        )
        entry = await self._answer(request, text, results)
        return await ScriptedModelClient([entry]).complete(request)

    async def _answer(self, request: ModelRequest, text: str, results: int) -> ScriptedResponse:
        name, _, argument = text.partition(":")
        if text.startswith(APPROVAL_PREFIX):
            tasks = _note_tasks(request)
            if results == 0:
                statuses = ["completed"] + ["in_progress"] * (len(tasks) - 1)
                return scripted_tool_calls(
                    ("exec-1", "write_todos", _todos(*zip(tasks, statuses, strict=True)))
                )
            if results == 1:
                return scripted_tool_calls(
                    ("exec-2", "write_todos", _todos(*((t, "completed") for t in tasks)))
                )
            return scripted_answer("executed")
        if name == "plan" and results == 0:
            tasks = argument.split(",")
            return scripted_tool_calls(
                ("plan-1", "write_todos", _todos(*((t, "pending") for t in tasks)))
            )
        if name == "clear" and results == 0:
            return scripted_tool_calls(("clear-1", "write_todos", _todos()))
        if name == "mixed" and results == 0:
            return scripted_tool_calls(
                ("m-lookup", "lookup", '{"q":"x"}'),
                ("m-ask", "ask_user", '{"question":"which?"}'),
                ("m-todos", "write_todos", _todos(("only", "pending"))),
            )
        if name == "hold":
            # Polling a file, not an in-process event: the gate crosses processes.
            while not await asyncio.to_thread((self._gates / argument).exists):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            return scripted_answer("held")
        if results:
            return scripted_answer("planned")
        return scripted_answer("ok")


class GatedApprovalRunner(StepwiseRunner):
    """Stepwise whose approval message cannot be built until the gate file exists."""

    def __init__(self, definition: AgentDefinition, gate: Path, log: RunLog) -> None:
        super().__init__(definition)
        self._gate = gate
        self._log = log

    def build_user_message(self, text: str) -> FrameworkMessage:
        if text.startswith(APPROVAL_PREFIX) and not self._gate.exists():
            self._log.append("approval_held", text=text)
            raise RuntimeError("the approval gate is closed")
        return super().build_user_message(text)


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    @tool(policy=ToolPolicy(effect=ToolEffect.READ))
    def lookup(q: str = "") -> str:
        """Looks something up.

        Args:
            q: What to look up.
        """
        return "found"

    definition = AgentDefinition(model=PlanModel(config), tools=[lookup])
    gate = config.get("approval_gate")
    runner: StepwiseRunner = (
        GatedApprovalRunner(definition, Path(str(gate)), RunLog(str(config["log_path"])))
        if gate
        else StepwiseRunner(definition)
    )
    plan_mode = bool(config.get("plan_mode_enabled", True))
    built_ins: Sequence[Any] = ("ask_user", "durable_wait", "write_todos")
    options = AgentSessionOptions(built_in_tools=tuple(built_ins), plan_mode_enabled=plan_mode)
    return AgentSessionFlow(runner, flow_type=str(config["flow_type"]), options=options)
