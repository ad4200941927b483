"""Drives one case of the data file through a Worker app: real dexlite, real Worker
child processes (SIGKILLed where a case says), Step shapes from the Flow's history."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dex import FlowConfig, StartFlowOptions, StepDurability
from dex_agents.results import APPROVAL_DEADLINE_PASSED, OUTCOME_UNKNOWN_RESULT
from dex_agents_contracts import AgentSnapshot, MessageRole, ToolCallStatus

from dex_agents_testing.conformance._cases import Case, load_cases
from dex_agents_testing.history import _matches
from dex_agents_testing.processes import wait_until
from dex_agents_testing.worker_apps import WorkerApp

__all__ = ["Traits", "run_case"]


@dataclass(frozen=True)
class Traits:
    """Where a framework stores a turn differently; the cases' `{name}` placeholders."""

    messages_after_booking: int
    """Items the model sees in the turn after a "book" turn (one per tool call, or one
    for the whole response, plus the new user message)."""
    messages_after_weather: int = 5
    """Items the model sees in the turn after a "weather" turn (user, call, result,
    answer, new user message, unless the framework stores more)."""
    structured_output_as_text: bool = False
    """The answer is the output as JSON text and a retry is a user message (the AI
    SDK's output spec), instead of an output tool call and its result."""
    harness: bool = False
    """A whole-turn harness: READ calls run inside RunModel, so no READ call is a
    tool Step to wait for, and a case's `harness` expectations replace its others."""
    tool_prefix: str = ""
    """What the framework puts before a tool's name (`{tool:NAME}` in the cases)."""
    compact_arguments: bool = False
    """A harness whose transcript writes tool arguments as compact JSON (`{"usd":5}`, as
    the Step-mode expectations spell them), where the cases' `harness` expectations
    spell them as Python's `json.dumps` does (the TypeScript Claude Agent SDK's)."""
    nonconforming: Mapping[str, str] = field(default_factory=dict)
    """Case id -> why the framework cannot, citing its code or documentation."""
    factories: Mapping[str, str] = field(default_factory=dict)
    """Case id -> the module's factory for it, where the framework fixes per agent what
    the case needs (say, one output type) and `build_flow`'s agent cannot show it."""


@dataclass
class _Run:
    app: WorkerApp
    traits: Traits
    jobs_log: Path | None = None
    """The jobs MCP server's call log, in an `mcp_tasks` case."""
    session: str = ""
    snapshot: AgentSnapshot | None = None

    def mcp_calls(self, tool: str) -> list[dict[str, Any]]:
        """The calls of `tool` (or `tasks/get`, ...) the case's MCP servers logged."""
        logs = [Path(f"{self.app.log_path}.mcp.jsonl"), self.jobs_log]
        lines = [
            line for log in logs if log and log.exists() for line in log.read_text().splitlines()
        ]
        return [e for e in map(json.loads, lines) if e["tool"] == tool]

    def fill(self, value: Any) -> Any:
        """Placeholders: the session, the runner's constants, the traits."""
        if isinstance(value, str):
            known = {
                "session": self.session,
                "APPROVAL_DEADLINE_PASSED": APPROVAL_DEADLINE_PASSED,
                "OUTCOME_UNKNOWN_RESULT": OUTCOME_UNKNOWN_RESULT,
                "messages_after_booking": str(self.traits.messages_after_booking),
                "messages_after_weather": str(self.traits.messages_after_weather),
            }
            value = re.sub(r"\{tool:(\w+)\}", lambda m: self.traits.tool_prefix + m[1], value)
            return re.sub(r"\{(\w+)\}", lambda m: known.get(m[1], m[0]), value)
        if isinstance(value, list):
            return [self.fill(v) for v in value]
        if isinstance(value, dict):
            return {k: self.fill(v) for k, v in value.items()}
        return value

    def step(self, step: Mapping[str, Any]) -> None:
        app = self.app
        timeout = float(step.get("timeout", 30.0))
        if "start" in step:
            options = None
            if step.get("durability") == "async":
                config = FlowConfig(step_durability=StepDurability.ASYNC)
                options = StartFlowOptions(config_override=config)
            self.session = app.start(step["start"], options=options)
        elif "send" in step:
            plan_mode = bool(step.get("plan_mode", False))
            assert app.client.send_user_message(self.session, step["send"], plan_mode=plan_mode)
        elif "wait_idle" in step:
            self.snapshot = app.wait_idle(self.session, step["wait_idle"], timeout=timeout)
        elif "wait_approval" in step:
            pending, done = step["wait_approval"]["pending"], step["wait_approval"].get("succeeded")
            app.wait(
                self.session,
                f"the approval wait of {pending}" + (f" next to a finished {done}" if done else ""),
                functools.partial(self._awaiting, pending, done),
            )
        elif "wait_question" in step:
            asked = step["wait_question"]
            app.wait(
                self.session,
                f"the question {asked}",
                lambda s: any(i.tool_call_id == asked for i in s.pending_interrupts),
            )
        elif "wait_mcp_calls" in step:
            for tool, count in step["wait_mcp_calls"].items():
                wait_until(
                    functools.partial(self._mcp_called, tool, count),
                    timeout=timeout,
                    what=f"{count} MCP {tool} calls",
                )
        elif "complete_mcp_task" in step:
            assert self.jobs_log is not None, "complete_mcp_task needs the mcp_tasks flow"
            self.jobs_log.with_suffix(".done").touch()
        elif "answer" in step:
            answer = step["answer"]
            assert app.client.answer_question(self.session, answer["call"], answer["text"])
        elif "wait_tool_runs" in step:
            for name, count in step["wait_tool_runs"].items():
                wait_until(functools.partial(self._ran, name, count), what=f"{name} to run")
        elif "wait_model_calls_with_results" in step:
            count = step["wait_model_calls_with_results"]
            wait_until(
                lambda: len([e for e in app.entries("model") if e["results"]]) >= count,
                what="a model call with tool results",
            )
        elif "resolve" in step:
            resolve = step["resolve"]
            accepted = app.client.resolve_interrupt(
                self.session,
                resolve["call"],
                approved=resolve["approved"],
                rejection_message=resolve.get("message"),
            )
            assert accepted is resolve.get("accepted", True)
        elif "execute_plan" in step:
            assert app.client.execute_plan(self.session, step["execute_plan"])
        elif "kill_worker" in step:
            app.kill_worker()
        elif "start_worker" in step:
            app.start_worker()
        elif "restart_worker" in step:
            app.restart_worker()
        elif "open_gate" in step:
            app.gate(step["open_gate"]).touch()
        else:
            overrides = step.get("harness", {}) if self.traits.harness else {}
            if self.traits.compact_arguments:
                # Inside the expected texts a JSON object's `": ` is escaped as `\": `.
                overrides = json.loads(json.dumps(overrides).replace('\\": ', '\\":'))
            self.expect(self.fill({**step["expect"], **overrides}))

    def _awaiting(self, pending: str, done: str | None, snapshot: AgentSnapshot) -> bool:
        """`pending` waits for approval once the READ call `done` (if any) has run (in a
        harness the READ ran inside RunModel: no tool Step of its own to wait for)."""
        waiting = any(i.tool_call_id == pending for i in snapshot.pending_interrupts)
        ran = (
            done is None
            or self.traits.harness
            or any(
                r.tool_call_id == done and r.status is ToolCallStatus.SUCCEEDED
                for r in snapshot.tool_calls
            )
        )
        return waiting and ran

    def _mcp_called(self, tool: str, count: int) -> bool:
        return len(self.mcp_calls(tool)) >= count

    def _ran(self, name: str, count: int) -> bool:
        return len(self.app.entries("tool", name)) >= count

    def expect(self, expected: Mapping[str, Any]) -> None:
        app = self.app
        snapshot = app.client.get_snapshot(self.session)
        messages = list(snapshot.messages)
        if "messages" in expected:
            wanted = expected["messages"]
            assert len(messages) == len(wanted), [(m.role, m.text) for m in messages]
            for i, (message, fields) in enumerate(zip(messages, wanted, strict=True)):
                for name, value in fields.items():
                    got = getattr(message, name)
                    got = got.name.lower() if name == "role" else got
                    assert got == value, f"message {i}.{name}: {got!r} != {value!r}"
        if "last_text" in expected:
            assert messages[-1].text == expected["last_text"], messages[-1].text
        if "last_text_contains" in expected:
            assert expected["last_text_contains"] in (messages[-1].text or ""), messages[-1].text
        if expected.get("text_deltas"):
            self._text_deltas(snapshot)
        if "reasoning_deltas" in expected:
            assert snapshot.state is not None
            turns = snapshot.state.turn_count
            events = self.app.events(self.session, "turn_completed", count=turns)
            reasoning = [
                json.loads(e.payload)["text"] for e in events if e.type == "reasoning_delta"
            ]
            assert "".join(reasoning) == expected["reasoning_deltas"], reasoning
        if "user_texts" in expected:
            users = [m.text for m in messages if m.role is MessageRole.USER]
            assert users == expected["user_texts"]
        if "usage_model_calls" in expected:
            assert snapshot.usage is not None
            assert snapshot.usage.model_calls == expected["usage_model_calls"]
        if "queued_messages" in expected:
            assert snapshot.queued_message_count == expected["queued_messages"]
        if "turn_error_contains" in expected:
            assert snapshot.state is not None
            error, part = snapshot.state.last_turn_error, expected["turn_error_contains"]
            assert (error is None) if part is None else (error is not None and part in error)
        if "shapes" in expected or "shape_lengths" in expected:
            shapes = app.shapes(self.session)
            for shape, want in zip(shapes, expected.get("shapes", []), strict=False):
                items = [w if isinstance(w, str) else tuple(w) for w in want]
                assert _matches(shape, items), f"Step shape {shape} does not match {want}"
            for shape, length in zip(shapes, expected.get("shape_lengths", []), strict=False):
                assert length is None or len(shape) == length, shapes
            assert len(shapes) >= len(expected.get("shapes", [])), shapes
        for name, count in expected.get("tool_runs", {}).items():
            runs = app.entries("tool", name)
            assert len(runs) == count, f"{name} ran {len(runs)} times"
        for name, keys in expected.get("mcp_calls", {}).items():
            got = [e["key"] for e in self.mcp_calls(name)]
            assert got == keys, f"the MCP server ran {name} with keys {got}"
        if "steps_include" in expected:
            ran = {step for shape in app.shapes(self.session) for step in shape}
            missing = set(expected["steps_include"]) - ran
            assert not missing, f"no {sorted(missing)} Step among {sorted(ran)}"
        for name, keys in expected.get("tool_keys", {}).items():
            # In any order: approvals given together may run their Steps either way round.
            got = [e["key"] for e in app.entries("tool", name)]
            assert sorted(got, key=str) == sorted(keys, key=str), got
        models = app.entries("model")
        if "model_calls" in expected:
            assert len(models) == expected["model_calls"]
        if "model_calls_with_results" in expected:
            assert [bool(e["results"]) for e in models] == expected["model_calls_with_results"]
        if "last_model_results" in expected:
            assert models[-1]["results"] == expected["last_model_results"]
        if "last_model_prompts" in expected:
            assert models[-1]["prompts"] == expected["last_model_prompts"]
        if "last_model_tools" in expected:
            assert "tools" in models[-1], "the app logs no `tools` for its model calls"
            assert sorted(models[-1]["tools"]) == sorted(expected["last_model_tools"])
        if "plan" in expected:
            plan = snapshot.plan
            assert plan is not None, "no plan"
            got = {"revision": plan.revision, "status": plan.status.name.lower()}
            assert got == expected["plan"], got
        if "structured_answers" in expected:
            self._structured(messages, expected["structured_answers"])

    def _text_deltas(self, snapshot: AgentSnapshot) -> None:
        """The turns' `text_delta` events, joined, are their answers (in as many pieces as
        the scripted model streams)."""
        assert snapshot.state is not None
        events = self.app.events(self.session, "turn_completed", count=snapshot.state.turn_count)
        deltas = [json.loads(e.payload)["text"] for e in events if e.type == "text_delta"]
        answers = [m.text or "" for m in snapshot.messages if m.role is MessageRole.ASSISTANT]
        assert deltas, "no text_delta events"
        assert "".join(deltas) == "".join(answers), (deltas, answers)

    def _structured(self, messages: list[Any], names: list[str]) -> None:
        """The answers' output names in order; after each but the last, the retry message."""
        answers = [m for m in messages if m.role is MessageRole.ASSISTANT]
        retry = load_cases().output.retry_message
        retries = len(names) - 1
        if self.traits.structured_output_as_text:
            assert [json.loads(m.text or "")["name"] for m in answers] == names
            roles = [MessageRole.USER, MessageRole.ASSISTANT] * len(names)
            assert [m.role for m in messages] == roles
            assert all(retry in (m.text or "") for m in messages[2::2])
        else:
            assert [json.loads(m.tool_arguments or "")["name"] for m in answers] == names
            outputs = [m.tool_output or "" for m in messages if m.role is MessageRole.TOOL]
            assert [retry in output for output in outputs[:retries]] == [True] * retries


def run_case(
    case: Case,
    make_app: Callable[..., WorkerApp],
    traits: Traits,
    *,
    jobs_log: Path | None = None,
    **where: Any,
) -> None:
    """Runs `case` on an app from `make_app(server, directory, interrupt_deadline=...)`;
    `jobs_log` is the jobs MCP server's log in an `mcp_tasks` case."""
    app = make_app(interrupt_deadline=case.interrupt_deadline, **where)
    app.start_worker()
    try:
        run = _Run(app, traits, jobs_log)
        for step in case.steps:
            run.step(step)
    finally:
        app.stop()
