"""Tool effects from Pydantic AI tool metadata, with the session's policies on top.

Pydantic AI has no effect annotation of its own. The runner reads two kinds of
metadata on `ToolDefinition.metadata`: the `dex_effect` key an application sets
(`Tool(..., metadata={"dex_effect": "read"})`), and MCP annotations that
Pydantic AI's MCP toolsets copy under `annotations` (readOnlyHint is read,
idempotentHint is idempotent_write). A tool Pydantic AI marks as needing
approval (`requires_approval=True`) needs the user's approval in Dex too, unless
a `ToolPolicy` says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from dex_agents import AgentTurnContext, ResolvedToolPolicy, ToolPolicy, resolve_tool_policy
from dex_agents_contracts import ToolEffect
from pydantic_ai import ToolDefinition

__all__ = ["DEX_EFFECT_METADATA_KEY", "framework_effect", "policy_for"]

DEX_EFFECT_METADATA_KEY = "dex_effect"
"""`ToolDefinition.metadata` key naming a tool's effect (`read`, `idempotent_write`, ...)."""

_EFFECTS_BY_NAME: Mapping[str, ToolEffect] = {
    "read": ToolEffect.READ,
    "idempotent_write": ToolEffect.IDEMPOTENT_WRITE,
    "non_idempotent_write": ToolEffect.NON_IDEMPOTENT_WRITE,
    "unclassified": ToolEffect.UNCLASSIFIED,
}


def framework_effect(tool_def: ToolDefinition | None) -> ToolEffect | None:
    """The effect the tool's own metadata declares, if any."""
    if tool_def is None or not tool_def.metadata:
        return None
    metadata = tool_def.metadata
    declared = metadata.get(DEX_EFFECT_METADATA_KEY)
    if isinstance(declared, ToolEffect):
        return declared
    if isinstance(declared, str):
        if declared not in _EFFECTS_BY_NAME:
            raise ValueError(
                f"tool {tool_def.name!r} declares {DEX_EFFECT_METADATA_KEY}={declared!r}; "
                f"expected one of {', '.join(_EFFECTS_BY_NAME)}"
            )
        return _EFFECTS_BY_NAME[declared]
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        if annotations.get("readOnlyHint") is True:
            return ToolEffect.READ
        if annotations.get("idempotentHint") is True:
            return ToolEffect.IDEMPOTENT_WRITE
    return None


def policy_for(
    tool_name: str,
    tool_def: ToolDefinition | None,
    *,
    turn: AgentTurnContext,
    runner_policies: Mapping[str, ToolPolicy],
    runner_default: ToolEffect | None,
    framework_requires_approval: bool,
) -> ResolvedToolPolicy:
    """A ToolPolicy (the runner's, then the session's) wins, then metadata, then the default."""
    policies = {**turn.tool_policies, **runner_policies}
    resolved = resolve_tool_policy(
        tool_name,
        tool_policies=policies,
        framework_effect=framework_effect(tool_def),
        default_effect=runner_default if runner_default is not None else turn.default_tool_effect,
    )
    if tool_name in policies or not framework_requires_approval:
        return resolved
    return ResolvedToolPolicy(effect=resolved.effect, requires_approval=True)
