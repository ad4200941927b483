"""Declared runner capabilities: what `describe()` returns and how the session reads it.

A runner says what it supports once, as `RunnerCapabilities` (runner.proto), each
missing capability with its reason; the session calls an optional method only when
the matching capability is declared, and docs/adapters.md tabulates the declarations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from dex_agents_contracts import RunnerCapabilities, RunnerCapabilityGap

from dex_agents._runner.capabilities import (
    ContextCompactionRunner,
    PlanModeRunner,
    ToolTaskCanceller,
    ToolTaskPoller,
    UnfinishedTurnMessageBuilder,
)
from dex_agents.errors import UserError

__all__ = [
    "CAPABILITIES",
    "DeclaredRunner",
    "DescribedRunner",
    "declare_capabilities",
    "declared_runner",
    "implied_capabilities",
]

CAPABILITIES: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(RunnerCapabilities) if f.name != "gaps"
)
"""The capability names, in runner.proto's order (the table's columns)."""

# The capabilities whose methods the session calls, each with the protocol declaring them.
_METHOD_BACKED: Mapping[str, type] = {
    "unfinished_turn_messages": UnfinishedTurnMessageBuilder,
    "tool_task_polls": ToolTaskPoller,
    "tool_task_cancels": ToolTaskCanceller,
    "compaction": ContextCompactionRunner,
}

_UNDECLARED = "not declared: the runner has no describe()"


@runtime_checkable
class DescribedRunner(Protocol):
    """A runner that declares its capabilities; every adapter is one."""

    def describe(self) -> RunnerCapabilities: ...


def declare_capabilities(
    *, supported: Iterable[str], unsupported: Mapping[str, str]
) -> RunnerCapabilities:
    """Capabilities where every capability is either supported or has a reason it is not.

    Raises:
        ValueError: a name is unknown, listed twice, missing, or has a blank reason.
    """
    supported = tuple(supported)
    named = [*supported, *unsupported]
    unknown = sorted(set(named) - set(CAPABILITIES))
    twice = sorted({name for name in named if named.count(name) > 1})
    missing = [name for name in CAPABILITIES if name not in named]
    blank = sorted(name for name, reason in unsupported.items() if not reason.strip())
    for problem, names in (
        ("unknown", unknown),
        ("listed twice", twice),
        ("neither supported nor given a reason", missing),
        ("unsupported without a reason", blank),
    ):
        if names:
            raise ValueError(f"capabilities {problem}: {', '.join(names)}")
    return RunnerCapabilities(
        **{name: True for name in supported},
        gaps=[
            RunnerCapabilityGap(capability=name, reason=unsupported[name])
            for name in CAPABILITIES
            if name in unsupported
        ],
    )


def implied_capabilities(runner: object) -> RunnerCapabilities:
    """The default for a runner without `describe()`: what its optional methods imply."""
    supported = [name for name, protocol in _METHOD_BACKED.items() if isinstance(runner, protocol)]
    if isinstance(runner, PlanModeRunner) and runner.supports_plan_mode:
        supported.append("plan_mode")
    return declare_capabilities(
        supported=supported,
        unsupported={name: _UNDECLARED for name in CAPABILITIES if name not in supported},
    )


@dataclass(frozen=True)
class DeclaredRunner:
    """A runner with its declared capabilities: how the session reaches an optional method."""

    runner: object
    capabilities: RunnerCapabilities

    @property
    def unfinished_turn_builder(self) -> UnfinishedTurnMessageBuilder | None:
        if not self.capabilities.unfinished_turn_messages:
            return None
        return cast(UnfinishedTurnMessageBuilder, self.runner)

    @property
    def tool_task_poller(self) -> ToolTaskPoller | None:
        return cast(ToolTaskPoller, self.runner) if self.capabilities.tool_task_polls else None

    @property
    def tool_task_canceller(self) -> ToolTaskCanceller | None:
        if not self.capabilities.tool_task_cancels:
            return None
        return cast(ToolTaskCanceller, self.runner)

    @property
    def compaction_runner(self) -> ContextCompactionRunner | None:
        return cast(ContextCompactionRunner, self.runner) if self.capabilities.compaction else None


def declared_runner(runner: Any) -> DeclaredRunner:
    """`runner` with what its `describe()` declares (or its methods imply, without one).

    Raises:
        UserError: `describe()` returned something else, or declares a capability
            whose methods the runner lacks.
    """
    if isinstance(runner, DescribedRunner):
        capabilities = runner.describe()
        if not isinstance(capabilities, RunnerCapabilities):
            raise UserError(
                f"{type(runner).__name__}.describe() returned {type(capabilities).__name__}, "
                "not RunnerCapabilities"
            )
    else:
        capabilities = implied_capabilities(runner)
    lacking = [
        f"{name} ({protocol.__name__})"
        for name, protocol in _METHOD_BACKED.items()
        if getattr(capabilities, name) and not isinstance(runner, protocol)
    ]
    if lacking:
        raise UserError(
            f"{type(runner).__name__} declares capabilities it does not implement: "
            + ", ".join(lacking)
        )
    return DeclaredRunner(runner, capabilities)
