"""Traced Stepwise sessions for FactoryScenario Workers, and the span file they write.

The exporter lives in the Worker process (`dex_agents_testing.span_files`, imported only
with tracing on); every span start and end is appended to a JSON-lines file the
test reads, so a test sees spans from Workers it SIGKILLed, and can tell whether
any span was started and never ended. `lookup` logs whether OpenTelemetry is
loaded in its Worker.

The model answers by rule, so a restarted Worker answers the same way: a
request whose last message is a tool result gets the answer `done`; any other
asks for `lookup` (read) and `write_note` (a write that needs approval) at once.
Config: `spans_path`, `log_path`, `flow_type`; optional `capture_content`,
`conventions`, `tracing` (false: off), `raising_tracer`, `gate_dir`,
`interrupt_deadline_seconds`, and `clock_path` (a FileClock the test moves).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import sys
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionFlow, AgentSessionOptions, ToolPolicy, TracingOptions
from dex_agents.models import (
    ModelRequest,
    ModelResponse,
    ModelUsage,
    ScriptedModelClient,
    ToolResultMessage,
    scripted_answer,
    scripted_tool_calls,
)
from dex_agents.stepwise import AgentDefinition, StepwiseRunner, tool
from dex_agents_contracts import ToolEffect
from dex_agents_testing import FileClock, RunLog, load_flow

__all__ = ["MODEL_NAME", "flow"]

MODEL_NAME = "rule-model"


def _otel_loaded() -> bool:
    return any(name.split(".")[0] == "opentelemetry" for name in sys.modules)


class RuleModel:
    def __init__(self, log: RunLog) -> None:
        self._log = log

    def supports_forced_tool_choice(self, settings: Mapping[str, object]) -> bool:
        return True

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        self._log.append("model_call", pid=os.getpid())
        if messages and isinstance(messages[-1], ToolResultMessage):
            entry = scripted_answer("done", usage=ModelUsage(input_tokens=30, output_tokens=4))
        else:
            entry = scripted_tool_calls(
                ("call-read", "lookup", '{"q":"weather"}'),
                ("call-write", "write_note", '{"text":"sunny"}'),
                usage=ModelUsage(input_tokens=20, output_tokens=8),
            )
        return await ScriptedModelClient([entry], model_name=MODEL_NAME).complete(request)


def _tracing(config: Mapping[str, Any]) -> TracingOptions | None:
    if not config.get("tracing", True):
        return None
    # Imported here, so a Worker without tracing never loads OpenTelemetry.
    exporters = importlib.import_module("dex_agents_testing.span_files")
    spans_path = str(config["spans_path"])
    provider: Any
    if config.get("raising_tracer"):
        provider = exporters.RaisingTracerProvider()
    else:
        provider = exporters.file_provider(spans_path)
    return TracingOptions(
        tracer_provider=provider,
        capture_content=bool(config.get("capture_content", False)),
        conventions=config.get("conventions", "current"),
        agent_name=config.get("agent_name"),
    )


def flow(config: Mapping[str, Any]) -> AgentSessionFlow:
    log = RunLog(str(config["log_path"]))
    if config.get("clock_path"):
        FileClock(str(config["clock_path"])).install()
    gates = Path(str(config.get("gate_dir", "/nonexistent")))

    @tool
    async def lookup(q: str = "") -> str:
        """Looks something up.

        Args:
            q: What to look up.
        """
        log.append("tool", name="lookup", pid=os.getpid(), otel_loaded=_otel_loaded())
        gate = gates / "lookup"
        if config.get("gate_dir"):
            # The gate is a file the test creates, so there is no event to await.
            while not gate.exists():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
        return f"found {q}"

    @tool
    def write_note(text: str) -> str:
        """Writes a note.

        Args:
            text: The note.
        """
        log.append("tool", name="write_note", pid=os.getpid())
        return "written"

    definition = AgentDefinition(
        model_resolver=lambda _: RuleModel(log), tools=[lookup, write_note]
    )
    deadline = config.get("interrupt_deadline_seconds")
    options = AgentSessionOptions(
        tool_policies={
            "lookup": ToolPolicy(effect=ToolEffect.READ),
            "write_note": ToolPolicy(
                effect=ToolEffect.NON_IDEMPOTENT_WRITE, requires_approval=True
            ),
        },
        interrupt_deadline=timedelta(seconds=float(deadline)) if deadline else None,
    )
    return AgentSessionFlow(
        StepwiseRunner(definition),
        flow_type=str(config["flow_type"]),
        options=options,
        tracing=_tracing(config),
    )


def traced(config: Mapping[str, Any]) -> AgentSessionFlow:
    """Another test Flow, traced: `inner` is `module:function` (given `inner_config`),
    or `scenario` (the JSON Scenario saved at `scenario_path`)."""
    inner = str(config["inner"])
    if inner == "scenario":
        built = load_flow(str(config["scenario_path"]))
    else:
        module_name, _, function_name = inner.partition(":")
        build = getattr(importlib.import_module(module_name), function_name)
        built = build(dict(config["inner_config"]))
    tracing = _tracing(config)
    assert tracing is not None
    built.enable_tracing(tracing)
    return built
