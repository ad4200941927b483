"""The conformance data file (`proto/testdata/conformance/cases.json`), read strictly.

Reading is the schema: a key this module does not know, a missing key or a
value of the wrong type fails the load, so the file cannot drift from what the
runner and the app factories understand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dex_agents._runner.declared import CAPABILITIES

__all__ = [
    "Call",
    "Case",
    "Cases",
    "ModelReply",
    "OutputSpec",
    "ToolSpec",
    "load_cases",
    "locate_cases",
]

OPERATIONS = frozenset(
    {
        "start",
        "send",
        "wait_idle",
        "wait_approval",
        "wait_question",
        "answer",
        "wait_mcp_calls",
        "complete_mcp_task",
        "wait_tool_runs",
        "wait_model_calls_with_results",
        "resolve",
        "execute_plan",
        "kill_worker",
        "start_worker",
        "restart_worker",
        "open_gate",
        "expect",
    }
)
"""A step is one of these keys (plus `timeout`, `durability` for some). An `expect`
step may add `harness`: the expectations that differ for a whole-turn harness (a
CLI that owns the turn's transcript), which runs a turn's READ calls inside
RunModel instead of in CallTool Steps and writes tool arguments as its own JSON."""

EXPECTATIONS = frozenset(
    {
        "messages",
        "last_text",
        "user_texts",
        "usage_model_calls",
        "shapes",
        "shape_lengths",
        "tool_runs",
        "tool_keys",
        "model_calls",
        "model_calls_with_results",
        "last_model_results",
        "last_model_prompts",
        "queued_messages",
        "turn_error_contains",
        "structured_answers",
        "last_text_contains",
        "text_deltas",
        "reasoning_deltas",
        "mcp_calls",
        "steps_include",
        "plan",
        "last_model_tools",
    }
)


FLOWS = {
    "built_ins": "the same agent in a session that enables every built-in tool",
    "mcp": (
        "the same agent with the notes MCP server (dex_agents_testing.mcp_notes, serving "
        "read_note, logging to the app's log path + `.mcp.jsonl`) as its MCP source"
    ),
    "mcp_tasks": (
        "the same agent with the jobs MCP server (dex_agents_testing.mcp_jobs over "
        "Streamable HTTP, which the suite starts for the case) as its MCP source, "
        "from `jobs_source()`"
    ),
    "plan_mode": (
        "the same agent in a session with plan mode enabled (and so every built-in tool); "
        "the app logs the tools each model call is offered (`tools`)"
    ),
}
"""A case's `flow`: what the app's `build_flow` serves with that flow's keyword
arguments (`_flows.FLOW_OPTIONS`)."""


class CasesError(ValueError):
    """The data file does not have the shape this module reads."""


def _keys(
    where: str, value: Any, required: set[str], optional: frozenset[str] | set[str] = frozenset()
) -> None:
    if not isinstance(value, dict):
        raise CasesError(f"{where}: expected an object, got {type(value).__name__}")
    missing = required - value.keys()
    unknown = value.keys() - required - optional
    if missing or unknown:
        raise CasesError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")


def _typed(where: str, value: Any, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise CasesError(f"{where}: expected {kind}, got {value!r}")
    return value


@dataclass(frozen=True)
class Call:
    """A tool call the scripted model makes; its id gets the number of user prompts so far."""

    id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class ModelReply:
    """What the scripted model answers to a user prompt that starts with `prompt`."""

    prompt: str
    calls: tuple[Call, ...] = ()
    output: Mapping[str, Any] | None = None
    retried_output: Mapping[str, Any] | None = None
    gate: str | None = None
    """Once tool results are in, the call waits for this gate (a kill test's target)."""
    error: str | None = None
    """Once tool results are in, every call fails with this message."""
    reasoning: str | None = None
    """The model reasons this before its answer (a reasoning part, streamed)."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    effect: str
    returns: str
    requires_approval: bool | None = None
    gate: str | None = None


@dataclass(frozen=True)
class OutputSpec:
    """The structured output type and its validator, which asks for one retry."""

    name: str
    fields: Mapping[str, str]
    capitalized: str
    retry_message: str


@dataclass(frozen=True)
class Case:
    id: str
    covers: tuple[str, ...]
    steps: tuple[Mapping[str, Any], ...]
    own_dexlite: bool = False
    interrupt_deadline: float | None = None
    capability: str | None = None
    """The runner capability (runner.proto's name) this case shows: an app that lists
    the case as nonconforming must declare the capability unsupported, and one that
    declares it unsupported must list the case with its framework's reason."""
    flow: str | None = None
    """The app's `build_flow` gets this flow's keyword arguments (see `FLOWS`)."""


@dataclass(frozen=True)
class Cases:
    replies: tuple[ModelReply, ...]
    results_text: str
    otherwise_text: str
    output: OutputSpec
    tools: Mapping[str, ToolSpec]
    cases: tuple[Case, ...]

    def reply_for(self, prompt: str) -> ModelReply | None:
        return next((r for r in self.replies if prompt.startswith(r.prompt)), None)


def _call(where: str, raw: Any) -> Call:
    _keys(where, raw, {"id", "name", "arguments"})
    return Call(
        _typed(where, raw["id"], str),
        _typed(where, raw["name"], str),
        _typed(where, raw["arguments"], dict),
    )


def _reply(where: str, raw: Any) -> ModelReply:
    optional = {"calls", "after_results", "output", "retried_output", "reasoning"}
    _keys(where, raw, {"prompt"}, optional)
    after = raw.get("after_results", {})
    _keys(f"{where}.after_results", after, set(), {"gate", "error"})
    return ModelReply(
        prompt=_typed(where, raw["prompt"], str),
        calls=tuple(_call(f"{where}.calls", c) for c in _typed(where, raw.get("calls", []), list)),
        output=raw.get("output"),
        retried_output=raw.get("retried_output"),
        gate=after.get("gate"),
        error=after.get("error"),
        reasoning=raw.get("reasoning"),
    )


def _tool(name: str, raw: Any) -> ToolSpec:
    where = f"tools.{name}"
    _keys(where, raw, {"effect", "returns"}, {"requires_approval", "gate"})
    return ToolSpec(
        name=name,
        effect=_typed(where, raw["effect"], str),
        returns=_typed(where, raw["returns"], str),
        requires_approval=raw.get("requires_approval"),
        gate=raw.get("gate"),
    )


def _step(where: str, raw: Any) -> Mapping[str, Any]:
    operations = OPERATIONS & set(_typed(where, raw, dict))
    if len(operations) != 1:
        raise CasesError(f"{where}: a step has exactly one operation, got {sorted(raw)}")
    (operation,) = operations
    _keys(where, raw, {operation}, {"timeout", "durability", "harness", "plan_mode"})
    if "plan_mode" in raw and operation != "send":
        raise CasesError(f"{where}: only a send step has plan_mode")
    if operation == "expect":
        _keys(f"{where}.expect", raw["expect"], set(), set(EXPECTATIONS))
        _keys(f"{where}.harness", raw.get("harness", {}), set(), set(EXPECTATIONS))
    elif "harness" in raw:
        raise CasesError(f"{where}: only an expect step has harness")
    return dict(raw)


def _case(where: str, raw: Any) -> Case:
    optional = {"own_dexlite", "interrupt_deadline", "capability", "flow"}
    _keys(where, raw, {"id", "covers", "steps"}, optional)
    steps = _typed(where, raw["steps"], list)
    capability = raw.get("capability")
    if capability is not None and capability not in CAPABILITIES:
        raise CasesError(f"{where}.capability: {capability!r} is no runner capability")
    flow = raw.get("flow")
    if flow is not None and flow not in FLOWS:
        raise CasesError(f"{where}.flow: {flow!r} is none of {sorted(FLOWS)}")
    return Case(
        id=_typed(where, raw["id"], str),
        covers=tuple(_typed(where, raw["covers"], list)),
        steps=tuple(_step(f"{where}.steps[{i}]", s) for i, s in enumerate(steps)),
        own_dexlite=bool(raw.get("own_dexlite", False)),
        interrupt_deadline=raw.get("interrupt_deadline"),
        capability=capability,
        flow=flow,
    )


def parse_cases(raw: Any) -> Cases:
    """The typed cases, or `CasesError` naming the first thing out of shape."""
    _keys("cases.json", raw, {"version", "model", "output", "tools", "cases"})
    if raw["version"] != 1:
        raise CasesError(f"cases.json: version {raw['version']!r}; this reader knows 1")
    model = raw["model"]
    _keys("model", model, {"replies", "results_text", "otherwise_text"})
    output = raw["output"]
    _keys("output", output, {"name", "fields", "retry_unless_capitalized", "retry_message"})
    cases = tuple(_case(f"cases[{i}]", c) for i, c in enumerate(raw["cases"]))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise CasesError(f"cases.json: case ids repeat: {ids}")
    shown = [c.capability for c in cases if c.capability is not None]
    if len(set(shown)) != len(shown):
        raise CasesError(f"cases.json: two cases show one capability: {shown}")
    return Cases(
        replies=tuple(_reply(f"model.replies[{i}]", r) for i, r in enumerate(model["replies"])),
        results_text=_typed("model.results_text", model["results_text"], str),
        otherwise_text=_typed("model.otherwise_text", model["otherwise_text"], str),
        output=OutputSpec(
            name=output["name"],
            fields=output["fields"],
            capitalized=output["retry_unless_capitalized"],
            retry_message=output["retry_message"],
        ),
        tools={name: _tool(name, t) for name, t in raw["tools"].items()},
        cases=cases,
    )


def locate_cases() -> Path:
    """The data file: `DEX_CONFORMANCE_CASES`, else `proto/testdata/conformance/cases.json`
    above this file (the source tree, or Bazel's runfiles) or above the working directory."""
    configured = os.environ.get("DEX_CONFORMANCE_CASES")
    if configured:
        return Path(configured).resolve()
    relative = Path("proto/testdata/conformance/cases.json")
    for start in (Path(__file__).resolve(), Path.cwd().resolve() / "x"):
        for parent in start.parents:
            if (parent / relative).is_file():
                return parent / relative
    raise FileNotFoundError(f"{relative} not found; set DEX_CONFORMANCE_CASES")


@cache
def load_cases(path: Path | None = None) -> Cases:
    return parse_cases(json.loads((path or locate_cases()).read_text(encoding="utf-8")))


def case_ids(cases: Sequence[Case]) -> list[str]:
    return [c.id for c in cases]
