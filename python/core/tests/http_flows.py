"""A Stepwise session Flow for the HTTP tests, built by `flow(config)` in the test and
in the Worker child (FactoryScenario); `events_capacity_bytes` in the config bounds
the AgentEvents Stream, so older turns' events get trimmed.

The model answers by the last user command (the text before the first space), so a
restarted Worker answers the same way, and streams its answer word by word:
- `say <words>`: answer `ok <words>`.
- `tool:<id>`: call the read tool `lookup`, then answer `looked up`.
- `approve:<id>`: call `deploy`, which needs approval, then answer `deployed`.
- `kill:<name>`: stream `partial answer `, write the Worker's pid to
  `<gate_dir>/<name>.streamed` and wait for `<gate_dir>/<name>` (the test SIGKILLs
  the Worker meanwhile); an attempt that finds the `.streamed` marker writes its
  pid to `<name>.retrying` and answers `final answer`, at once or, while
  `<name>.hold_retry` exists, once `<name>.retry` does.
- `hold:<name>`: call the read tool `hold`, which creates `<gate_dir>/<name>.started`
  and waits for `<gate_dir>/<name>` (the test steers meanwhile), then answer `held`.
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
    ModelDelta,
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
from dex_agents.options import DEFAULT_EVENT_STREAM_CAPACITY_BYTES
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import ToolEffect

__all__ = ["CLI_FLOW_TYPE", "cli_flow", "flow"]


def _command(messages: Sequence[object]) -> str:
    for message in reversed(messages):
        if isinstance(message, UserMessage):
            return message.text
    return "say"


class CommandModel:
    """A ModelClient answering by the last user command; one per Worker process."""

    def __init__(self, gate_dir: Path) -> None:
        self._gates = gate_dir

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        command = _command(messages)
        head, _, rest = command.partition(" ")
        name, _, argument = head.partition(":")
        after_tool = bool(messages) and isinstance(messages[-1], ToolResultMessage)
        usage = ModelUsage(input_tokens=3, output_tokens=2)
        entry: ScriptedResponse
        if name == "tool" and not after_tool:
            entry = scripted_tool_calls((f"call-{argument}", "lookup", '{"q":"x"}'), usage=usage)
        elif name == "hold" and not after_tool:
            entry = scripted_tool_calls(
                (f"call-{argument}", "hold", json.dumps({"gate": argument})), usage=usage
            )
        elif name == "approve" and not after_tool:
            entry = scripted_tool_calls(
                (f"call-{argument}", "deploy", '{"target":"prod"}'), usage=usage
            )
        elif name == "tool":
            entry = scripted_answer("looked up", usage=usage)
        elif name == "approve":
            entry = scripted_answer("deployed", usage=usage)
        elif name == "hold":
            entry = scripted_answer("held", usage=usage)
        elif name == "kill":
            entry = await self._killed_once(request, argument, usage)
        else:
            entry = scripted_answer(f"ok {rest}".strip(), usage=usage)
        return await ScriptedModelClient([entry]).complete(request)

    async def _killed_once(
        self, request: ModelRequest, gate: str, usage: ModelUsage
    ) -> ScriptedResponse:
        marker = self._gates / f"{gate}.streamed"
        if marker.exists():
            _mark(self._gates / f"{gate}.retrying")
            if (self._gates / f"{gate}.hold_retry").exists():
                await _opened(self._gates / f"{gate}.retry")
            return scripted_answer("final answer", usage=usage)
        if request.on_delta is not None:
            request.on_delta(ModelDelta(kind="text", text="partial "))
            request.on_delta(ModelDelta(kind="text", text="answer "))
        _mark(marker)
        await _opened(self._gates / gate)
        return scripted_answer("final answer", usage=usage)


def _mark(path: Path) -> None:
    """Creates `path` holding this process's pid, whole or not at all."""
    partial = path.with_name(f"{path.name}.partial")
    partial.write_text(str(os.getpid()), encoding="utf-8")
    partial.replace(path)


async def _opened(gate: Path) -> None:
    """Returns once `gate` exists: a file another process creates, so there is no
    event to await, and a stat each 20 ms blocks nothing that matters."""
    while not gate.exists():  # noqa: ASYNC110, ASYNC240 - the docstring says why
        await asyncio.sleep(0.02)


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    @tool
    def lookup(q: str = "") -> str:
        """Looks something up.

        Args:
            q: What to look up.
        """
        return f"found {q}"

    @tool
    def deploy(target: str = "") -> str:
        """Deploys.

        Args:
            target: Where to deploy.
        """
        return f"deployed to {target}"

    gates = Path(str(config.get("gate_dir", "/nonexistent")))

    @tool
    async def hold(gate: str = "") -> str:
        """Waits for its gate.

        Args:
            gate: The gate file's name.
        """
        (gates / f"{gate}.started").touch()
        await _opened(gates / gate)
        return "held"

    model = CommandModel(gates)
    definition = AgentDefinition(
        model_resolver=lambda settings: model, tools=[lookup, deploy, hold]
    )
    capacity = int(config.get("events_capacity_bytes", DEFAULT_EVENT_STREAM_CAPACITY_BYTES))
    options = AgentSessionOptions(
        event_stream_capacity_bytes=capacity,
        tool_policies={
            "lookup": ToolPolicy(effect=ToolEffect.READ),
            "deploy": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True),
            "hold": ToolPolicy(effect=ToolEffect.READ),
        },
    )
    return AgentSessionFlow(
        StepwiseRunner(definition), flow_type=str(config["flow_type"]), options=options
    )


CLI_FLOW_TYPE = "HttpCliSessions"


def cli_flow() -> AgentSessionFlow:
    """The Flow `dex-agents serve --flow http_flows:cli_flow` serves in the CLI test."""
    return flow({"flow_type": CLI_FLOW_TYPE})
