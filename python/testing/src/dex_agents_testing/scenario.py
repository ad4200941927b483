"""A session scenario a Worker process can rebuild: flow type, options and scripted runner."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy
from dex_agents._runner.policies import BuiltInToolName
from dex_agents_contracts import ToolEffect

from dex_agents_testing.runlog import RunLog
from dex_agents_testing.scripted import (
    ModelReply,
    ScriptedRunner,
    ScriptedTool,
    TaskScriptedRunner,
)

__all__ = ["FactoryScenario", "Scenario", "load_flow"]

_DEFAULT_OPTIONS = AgentSessionOptions()


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """Everything needed to build the same session Flow in the test and in a Worker."""

    flow_type: str
    script: Sequence[Sequence[ModelReply]]
    tools: Sequence[ScriptedTool] = ()
    log_path: str
    tool_policies: Mapping[str, ToolPolicy] = field(default_factory=dict)
    interrupt_deadline_seconds: float | None = None
    # The session's own defaults, so a scenario that sets none runs as a session would.
    message_window_size: int = _DEFAULT_OPTIONS.message_window_size
    message_chunk_size: int = _DEFAULT_OPTIONS.message_chunk_size
    message_chunk_max_bytes: int = _DEFAULT_OPTIONS.message_chunk_max_bytes
    max_framework_run_state_bytes: int = _DEFAULT_OPTIONS.max_framework_run_state_bytes
    task_runner: bool = False
    """Use TaskScriptedRunner, which polls and cancels tool tasks."""
    built_in_tools: Sequence[BuiltInToolName] = ()
    max_durable_wait_seconds: float | None = None
    max_tool_calls_in_flight: int = _DEFAULT_OPTIONS.max_tool_calls_in_flight

    @property
    def log(self) -> RunLog:
        return RunLog(self.log_path)

    def runner(self) -> ScriptedRunner:
        runner_type = TaskScriptedRunner if self.task_runner else ScriptedRunner
        return runner_type(self.script, self.tools, self.log)

    def options(self) -> AgentSessionOptions:
        return AgentSessionOptions(
            tool_policies=dict(self.tool_policies),
            interrupt_deadline=(
                timedelta(seconds=self.interrupt_deadline_seconds)
                if self.interrupt_deadline_seconds is not None
                else None
            ),
            message_window_size=self.message_window_size,
            message_chunk_size=self.message_chunk_size,
            message_chunk_max_bytes=self.message_chunk_max_bytes,
            max_framework_run_state_bytes=self.max_framework_run_state_bytes,
            built_in_tools=tuple(self.built_in_tools),
            max_durable_wait=(
                timedelta(seconds=self.max_durable_wait_seconds)
                if self.max_durable_wait_seconds is not None
                else _DEFAULT_OPTIONS.max_durable_wait
            ),
            max_tool_calls_in_flight=self.max_tool_calls_in_flight,
        )

    def build_flow(self) -> AgentSessionFlow:
        return AgentSessionFlow(self.runner(), flow_type=self.flow_type, options=self.options())

    def save(self, path: str | Path) -> Path:
        runner = self.runner().to_json()
        data: dict[str, Any] = {
            "flow_type": self.flow_type,
            "script": runner["script"],
            "tools": runner["tools"],
            "log_path": self.log_path,
            "tool_policies": {
                name: {"effect": int(p.effect), "requires_approval": p.requires_approval}
                for name, p in self.tool_policies.items()
            },
            "interrupt_deadline_seconds": self.interrupt_deadline_seconds,
            "message_window_size": self.message_window_size,
            "message_chunk_size": self.message_chunk_size,
            "message_chunk_max_bytes": self.message_chunk_max_bytes,
            "max_framework_run_state_bytes": self.max_framework_run_state_bytes,
            "task_runner": self.task_runner,
            "built_in_tools": list(self.built_in_tools),
            "max_durable_wait_seconds": self.max_durable_wait_seconds,
            "max_tool_calls_in_flight": self.max_tool_calls_in_flight,
        }
        Path(path).write_text(json.dumps(data), encoding="utf-8")
        return Path(path)

    @staticmethod
    def load(path: str | Path) -> Scenario:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        runner = ScriptedRunner.from_json(
            {"script": data["script"], "tools": data["tools"], "log": data["log_path"]},
            task_runner=data.get("task_runner", False),
        )
        return Scenario(
            flow_type=data["flow_type"],
            script=runner.script,
            tools=list(runner.tools.values()),
            log_path=data["log_path"],
            tool_policies={
                name: ToolPolicy(
                    effect=ToolEffect(p["effect"]), requires_approval=p["requires_approval"]
                )
                for name, p in data["tool_policies"].items()
            },
            interrupt_deadline_seconds=data["interrupt_deadline_seconds"],
            message_window_size=data["message_window_size"],
            message_chunk_size=data["message_chunk_size"],
            message_chunk_max_bytes=data["message_chunk_max_bytes"],
            max_framework_run_state_bytes=data["max_framework_run_state_bytes"],
            task_runner=data.get("task_runner", False),
            built_in_tools=tuple(data.get("built_in_tools", ())),
            max_durable_wait_seconds=data.get("max_durable_wait_seconds"),
            max_tool_calls_in_flight=data.get(
                "max_tool_calls_in_flight", _DEFAULT_OPTIONS.max_tool_calls_in_flight
            ),
        )


@dataclass(frozen=True, kw_only=True)
class FactoryScenario:
    """A session Flow that `factory(config)` builds, in the test and in the Worker child.

    For sessions the JSON `Scenario` cannot describe (Stepwise with a scripted
    model client, runners with task or compaction capabilities): the factory is
    `module:function`, importable in the child because it inherits the test's
    import path (`child_env`), and `config` is plain JSON.
    """

    factory: str
    config: Mapping[str, Any] = field(default_factory=dict)
    log_path: str | None = None

    @property
    def log(self) -> RunLog:
        if self.log_path is None:
            raise ValueError(f"the scenario of {self.factory} keeps no run log")
        return RunLog(self.log_path)

    def build_flow(self) -> AgentSessionFlow:
        module_name, _, function_name = self.factory.partition(":")
        if not module_name or not function_name:
            raise ValueError(f"factory {self.factory!r} must be 'module:function'")
        build: Callable[[Mapping[str, Any]], AgentSessionFlow] = getattr(
            importlib.import_module(module_name), function_name
        )
        flow = build(self.config)
        if not isinstance(flow, AgentSessionFlow):
            raise TypeError(f"{self.factory} returned {type(flow).__name__}, not AgentSessionFlow")
        return flow

    def save(self, path: str | Path) -> Path:
        data = {"factory": self.factory, "config": dict(self.config), "log_path": self.log_path}
        Path(path).write_text(json.dumps(data), encoding="utf-8")
        return Path(path)


def load_flow(path: str | Path) -> AgentSessionFlow:
    """The Flow a saved `Scenario` or `FactoryScenario` describes."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if "factory" in data:
        return FactoryScenario(
            factory=data["factory"], config=data["config"], log_path=data["log_path"]
        ).build_flow()
    return Scenario.load(path).build_flow()
