"""What every app factory's fake model and tools do, decided by the data file.

An app factory turns `Answer` into its framework's response and calls
`run_tool` from each tool body; the model and the tools log to the app's JSON
lines (`WorkerApp.entries`) here, and wait for gate files here, so the
frameworks differ only in how a reply and a tool are spelled.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from dex_agents import AgentSessionOptions, ToolPolicy
from dex_agents._runner.policies import BUILT_IN_TOOL_NAMES
from dex_agents.mcp import McpHttpServer, McpToolSource
from dex_agents_contracts import ToolEffect

from dex_agents_testing.conformance._cases import Call, Cases, OutputSpec, load_cases

__all__ = [
    "JOBS_URL_ENV",
    "Answer",
    "ScriptedApp",
    "deadline",
    "jobs_source",
    "retry_reason",
    "session_options",
]

JOBS_URL_ENV = "DEX_CONFORMANCE_JOBS_URL"
"""Where the suite tells an app (and its Worker) the jobs MCP server's URL."""


@dataclass(frozen=True)
class Answer:
    """One model response: text, tool calls (ids numbered), or a structured output;
    `reasoning` comes before it where the data file's reply reasons."""

    text: str | None = None
    calls: tuple[Call, ...] = ()
    output: Mapping[str, Any] | None = None
    reasoning: str | None = None


def deadline(seconds: float | None) -> timedelta | None:
    return timedelta(seconds=seconds) if seconds is not None else None


def jobs_source() -> McpToolSource:
    """The `mcp_tasks` flow's MCP source: the jobs server the suite started for the case."""
    return McpToolSource([McpHttpServer(name="jobs", url=os.environ[JOBS_URL_ENV])])


def session_options(
    interrupt_deadline_seconds: float | None,
    *,
    built_in_tools: bool = False,
    plan_mode: bool = False,
) -> AgentSessionOptions:
    """An app factory's session: the case's approval deadline, every built-in tool where
    `build_flow` gets `built_in_tools` (the cases whose `flow` is `built_ins`), and plan
    mode where it gets `plan_mode` (flow `plan_mode`, which enables the built-ins too)."""
    return AgentSessionOptions(
        interrupt_deadline=deadline(interrupt_deadline_seconds),
        built_in_tools=BUILT_IN_TOOL_NAMES if built_in_tools or plan_mode else (),
        plan_mode_enabled=plan_mode,
    )


async def _gate(path: Path) -> None:
    """Waits for a gate file; it polls, because the test creates the file from its own process."""
    while not await asyncio.to_thread(path.exists):  # noqa: ASYNC110 - see the docstring
        await asyncio.sleep(0.05)


@dataclass
class ScriptedApp:
    """The scripted model and tools of one Worker app, logging to `log_path`."""

    log_path: str
    cases: Cases = field(default_factory=load_cases)

    @property
    def output(self) -> OutputSpec:
        return self.cases.output

    def _log(self, entry: dict[str, Any]) -> None:
        with Path(self.log_path).open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def policies(self, name: str = "{}") -> dict[str, ToolPolicy]:
        """Each tool's policy under the name the framework gives it (`name` formats it)."""
        return {
            name.format(tool.name): ToolPolicy(
                effect=ToolEffect[tool.effect],
                **(
                    {"requires_approval": tool.requires_approval}
                    if tool.requires_approval is not None
                    else {}
                ),
            )
            for tool in self.cases.tools.values()
        }

    async def answer(
        self,
        *,
        prompts: Sequence[str],
        results: Sequence[tuple[str, str, str]],
        messages: int,
        retried: bool = False,
        log: Mapping[str, Any] | None = None,
    ) -> Answer:
        """The reply to a model call that saw `prompts` (the user's, in order), this
        step's tool `results` as (call id, tool name, output) and `messages` items in
        all; `retried` when the output validator asked for a retry. Logs the call."""
        self.log_model(prompts=prompts, results=results, messages=messages, **(log or {}))
        prompt = prompts[-1] if prompts else ""
        reply = self.cases.reply_for(prompt)
        if reply is not None and reply.output is not None:
            chosen = reply.retried_output if retried else reply.output
            return Answer(output=chosen)
        if results:
            if reply is not None and reply.error is not None:
                raise RuntimeError(reply.error)
            if reply is not None and reply.gate is not None:
                await _gate(self.gate(reply.gate))
            shown = "; ".join(f"{name}={output}" for _, name, output in results)
            return Answer(text=self.cases.results_text.format(results=shown))
        if reply is not None and reply.calls:
            n = len(prompts)
            return Answer(calls=tuple(Call(f"{c.id}{n}", c.name, c.arguments) for c in reply.calls))
        reasoning = reply.reasoning if reply is not None else None
        return Answer(text=self.cases.otherwise_text.format(messages=messages), reasoning=reasoning)

    def log_model(
        self,
        *,
        prompts: Sequence[str],
        results: Sequence[tuple[str, str, str]],
        messages: int,
        **extra: Any,
    ) -> None:
        """Logs a model call (`answer` does; an app's own replies call it directly)."""
        self._log(
            {
                "kind": "model",
                "messages": messages,
                "prompts": list(prompts),
                "results": {call_id: output for call_id, _, output in results},
                **extra,
            }
        )

    def gate(self, name: str) -> Path:
        return Path(f"{self.log_path}.{name}-gate")

    @property
    def mcp_log(self) -> Path:
        """Where the `mcp` flow's notes server logs its calls (the `mcp_calls` expectation)."""
        return Path(f"{self.log_path}.mcp.jsonl")

    async def run_tool(self, name: str, arguments: Mapping[str, Any], key: str | None) -> str:
        """A tool body: logs the run (with the Step's idempotency key, if any), waits
        for the tool's gate and returns the data file's output."""
        tool = self.cases.tools[name]
        self.log_tool(name, key)
        if tool.gate is not None:
            await _gate(self.gate(tool.gate))
        return tool.returns.format(**arguments)

    def log_tool(self, name: str, key: str | None) -> None:
        """Logs a tool run (`run_tool` does; an app's own tools call it directly)."""
        self._log({"kind": "tool", "name": name, "key": key})

    def log_callback(self, name: str) -> None:
        """Logs a framework callback's run for the tool `name` (an app's own cases)."""
        self._log({"kind": "callback", "name": name})

    def retry_reason(self, output: Mapping[str, Any]) -> str | None:
        return retry_reason(output, self.cases)


def retry_reason(output: Mapping[str, Any], cases: Cases | None = None) -> str | None:
    """The output validator's retry message for an output it rejects, else None."""
    spec = (cases or load_cases()).output
    value = str(output[spec.capitalized])
    return spec.retry_message if value != value.capitalize() else None
