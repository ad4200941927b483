"""Drives one case of the data file through a Worker app: real dexlite, real Worker
child processes (SIGKILLed where a case says), Step shapes from the Flow's history."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


@dataclass
class _Run:
    app: WorkerApp
    traits: Traits
    session: str = ""
    snapshot: AgentSnapshot | None = None

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
            assert app.client.send_user_message(self.session, step["send"])
        elif "wait_idle" in step:
            self.snapshot = app.wait_idle(self.session, step["wait_idle"], timeout=timeout)
        elif "wait_approval" in step:
            pending, done = step["wait_approval"]["pending"], step["wait_approval"]["succeeded"]
            app.wait(
                self.session,
                f"the approval wait of {pending} next to a finished {done}",
                functools.partial(self._awaiting, pending, done),
            )
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

    def _awaiting(self, pending: str, done: str, snapshot: AgentSnapshot) -> bool:
        """`pending` waits for approval once the READ call `done` has run (in a harness
        the READ ran inside RunModel: no tool Step of its own to wait for)."""
        waiting = any(i.tool_call_id == pending for i in snapshot.pending_interrupts)
        ran = self.traits.harness or any(
            r.tool_call_id == done and r.status is ToolCallStatus.SUCCEEDED
            for r in snapshot.tool_calls
        )
        return waiting and ran

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
        for name, keys in expected.get("tool_keys", {}).items():
            assert [e["key"] for e in app.entries("tool", name)] == keys
        models = app.entries("model")
        if "model_calls" in expected:
            assert len(models) == expected["model_calls"]
        if "model_calls_with_results" in expected:
            assert [bool(e["results"]) for e in models] == expected["model_calls_with_results"]
        if "last_model_results" in expected:
            assert models[-1]["results"] == expected["last_model_results"]
        if "last_model_prompts" in expected:
            assert models[-1]["prompts"] == expected["last_model_prompts"]
        if "structured_answers" in expected:
            self._structured(messages, expected["structured_answers"])

    def _structured(self, messages: list[Any], names: list[str]) -> None:
        answers = [m for m in messages if m.role is MessageRole.ASSISTANT]
        retry = load_cases().output.retry_message
        if self.traits.structured_output_as_text:
            assert [json.loads(m.text or "")["name"] for m in answers] == names
            assert [m.role for m in messages] == [MessageRole.USER, MessageRole.ASSISTANT] * 2
            assert retry in (messages[2].text or "")
        else:
            assert [json.loads(m.tool_arguments or "")["name"] for m in answers] == names
            outputs = [m.tool_output for m in messages if m.role is MessageRole.TOOL]
            assert outputs[0] is not None
            assert retry in outputs[0]


def run_case(case: Case, make_app: Callable[..., WorkerApp], traits: Traits, **where: Any) -> None:
    """Runs `case` on an app from `make_app(server, directory, interrupt_deadline=...)`."""
    app = make_app(interrupt_deadline=case.interrupt_deadline, **where)
    app.start_worker()
    try:
        run = _Run(app, traits)
        for step in case.steps:
            run.step(step)
    finally:
        app.stop()
