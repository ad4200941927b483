"""Tool effects and policies: from a framework's tool declaration to the call's policy.

Every adapter reads some declaration of what a tool does (a metadata key, MCP
annotations, its own policy object) and lets the session's `ToolPolicy` win
over it; the helpers here are that rule, so adapters only read their framework.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from dex_agents_contracts import ENUM_WIRE_STRINGS, ToolEffect

BuiltInToolName = Literal["ask_user", "durable_wait", "write_todos"]
BUILT_IN_TOOL_NAMES: tuple[BuiltInToolName, ...] = ("ask_user", "durable_wait", "write_todos")

DEFAULT_REQUIRES_APPROVAL: Mapping[ToolEffect, bool] = {
    ToolEffect.READ: False,
    ToolEffect.IDEMPOTENT_WRITE: False,
    ToolEffect.NON_IDEMPOTENT_WRITE: True,
    ToolEffect.UNCLASSIFIED: True,
}
"""Whether a call needs the user's approval when its policy does not say."""

TOOL_EFFECTS_BY_NAME: Mapping[str, ToolEffect] = {
    ENUM_WIRE_STRINGS[ToolEffect][effect]: effect for effect in DEFAULT_REQUIRES_APPROVAL
}
"""The wire name of every tool effect (`read`, `idempotent_write`, ...), for declarations."""


def default_tool_effect() -> ToolEffect:
    """The effect of a tool with no policy and no framework metadata."""
    return ToolEffect.UNCLASSIFIED


def tool_effect_named(name: str, *, tool_name: str, source: str) -> ToolEffect:
    """The effect a declaration names by its wire name.

    Raises:
        ValueError: `name` is no effect; the message names the tool and `source`
            (where the declaration was read, e.g. `dex_effect`).
    """
    effect = TOOL_EFFECTS_BY_NAME.get(name)
    if effect is None:
        raise ValueError(
            f"tool {tool_name!r} declares {source}={name!r}; "
            f"expected one of {', '.join(TOOL_EFFECTS_BY_NAME)}"
        )
    return effect


def tool_effect_from_annotations(annotations: Mapping[str, object]) -> ToolEffect | None:
    """The effect MCP tool annotations imply: readOnlyHint is a read, idempotentHint an
    idempotent write; anything else says nothing."""
    if annotations.get("readOnlyHint") is True:
        return ToolEffect.READ
    if annotations.get("idempotentHint") is True:
        return ToolEffect.IDEMPOTENT_WRITE
    return None


@dataclass(frozen=True, kw_only=True)
class ToolPolicy:
    """Per-tool override of the effect and approval defaults."""

    effect: ToolEffect
    """What the tool may do to the outside world; decides its Step and retries."""
    requires_approval: bool | None = None
    """None uses the effect's default (`DEFAULT_REQUIRES_APPROVAL`)."""


@dataclass(frozen=True, kw_only=True)
class ResolvedToolPolicy:
    """The effect and approval a tool call runs with."""

    effect: ToolEffect
    requires_approval: bool


def resolve_tool_policy(
    tool_name: str,
    *,
    tool_policies: Mapping[str, ToolPolicy],
    framework_effect: ToolEffect | None = None,
    default_effect: ToolEffect = ToolEffect.UNCLASSIFIED,
    framework_requires_approval: bool | None = None,
) -> ResolvedToolPolicy:
    """An explicit `ToolPolicy` wins, then framework metadata, then the session default.

    `framework_requires_approval` is the framework's own approval flag for the
    tool; like its effect, it counts only without an explicit policy.
    """
    policy = tool_policies.get(tool_name)
    if policy is not None:
        effect = policy.effect
        requires_approval = policy.requires_approval
    else:
        effect = framework_effect if framework_effect is not None else default_effect
        requires_approval = framework_requires_approval
    if effect not in DEFAULT_REQUIRES_APPROVAL:
        raise ValueError(f"tool {tool_name!r}: {effect!r} is not a tool effect")
    if requires_approval is None:
        requires_approval = DEFAULT_REQUIRES_APPROVAL[effect]
    return ResolvedToolPolicy(effect=effect, requires_approval=requires_approval)


BUILT_IN_TOOL_POLICY = ResolvedToolPolicy(effect=ToolEffect.READ, requires_approval=False)
"""The policy of an enabled built-in's call: the session runs it as a read, unapproved."""
