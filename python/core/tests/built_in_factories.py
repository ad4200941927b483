"""Scripted sessions with built-in tools, for FactoryScenario Workers.

The JSON Scenario's model sends arguments as JSON objects only; these runners
also send exact argument text (`raw_arguments`), so tests can feed RunModel
text that is not JSON at all.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions
from dex_agents.runner import AgentTurnContext, AgentTurnOutcome, ToolCallsRequested
from dex_agents_testing import ModelReply, RunLog, ScriptedRunner, ScriptedTool, ScriptedToolCall

__all__ = ["build_scripted_flow", "raw_arguments", "scripted_config"]

_RAW = "__raw_arguments__"


def raw_arguments(tool_call_id: str, tool_name: str, text: str) -> ScriptedToolCall:
    """A scripted call whose argument text is exactly `text`."""
    return ScriptedToolCall(tool_call_id=tool_call_id, tool_name=tool_name, arguments={_RAW: text})


class RawArgumentsRunner(ScriptedRunner):
    """A ScriptedRunner that sends `raw_arguments` calls' text unchanged, and may plan."""

    def __init__(
        self,
        script: Sequence[Sequence[ModelReply]],
        tools: Sequence[ScriptedTool],
        log: RunLog,
        *,
        supports_plan_mode: bool,
    ) -> None:
        super().__init__(script, tools, log)
        self._supports_plan_mode = supports_plan_mode

    @property
    def supports_plan_mode(self) -> bool:
        return self._supports_plan_mode

    async def run_model_step(self, turn: AgentTurnContext) -> AgentTurnOutcome:
        outcome = await super().run_model_step(turn)
        if not isinstance(outcome, ToolCallsRequested):
            return outcome
        calls = []
        for call in outcome.tool_calls:
            value = json.loads(call.arguments)
            if isinstance(value, dict) and set(value) == {_RAW}:
                calls.append(dataclasses.replace(call, arguments=value[_RAW]))
            else:
                calls.append(call)
        return dataclasses.replace(outcome, tool_calls=calls)


def scripted_config(
    script: Sequence[Sequence[ModelReply]],
    *,
    tools: Sequence[ScriptedTool] = (),
    built_in_tools: Sequence[str] = (),
    max_durable_wait_seconds: int | None = None,
    plan_mode_enabled: bool = False,
) -> dict[str, Any]:
    """The factory config for `build_scripted_flow` (plain JSON)."""
    runner = ScriptedRunner(script, tools, RunLog("unused")).to_json()
    return {
        "script": runner["script"],
        "tools": runner["tools"],
        "built_in_tools": list(built_in_tools),
        "max_durable_wait_seconds": max_durable_wait_seconds,
        "plan_mode_enabled": plan_mode_enabled,
    }


def build_scripted_flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    """The factory: a ScriptedRunner session with the configured built-ins."""
    parsed = ScriptedRunner.from_json(
        {"script": config["script"], "tools": config["tools"], "log": config["log_path"]}
    )
    runner = RawArgumentsRunner(
        parsed.script,
        list(parsed.tools.values()),
        parsed.log,
        supports_plan_mode=bool(config["plan_mode_enabled"]),
    )
    extra: dict[str, Any] = {}
    if config["max_durable_wait_seconds"] is not None:
        extra["max_durable_wait"] = timedelta(seconds=config["max_durable_wait_seconds"])
    options = AgentSessionOptions(
        built_in_tools=tuple(config["built_in_tools"]),
        plan_mode_enabled=bool(config["plan_mode_enabled"]),
        **extra,
    )
    return AgentSessionFlow(runner, flow_type=config["flow_type"], options=options)
