"""The session options a served runner reports (`RunnerSessionOptions`) as `AgentSessionOptions`.

A TypeScript application sets its Flow types' options next to its runners
(`serveRunners({sessionOptions})`); the Worker reads them when it describes
each runner, so options never travel on a command line and a restarted Worker
picks up what the sidecar serves now.
"""

from __future__ import annotations

from datetime import timedelta
from typing import cast

from dex_agents_contracts import RunnerCompactionPolicy, RunnerSessionOptions, ToolEffect

from dex_agents._runner.policies import BUILT_IN_TOOL_NAMES, BuiltInToolName, ToolPolicy
from dex_agents.errors import UserError
from dex_agents.options import AgentSessionOptions, CompactionPolicy

__all__ = ["agent_session_options"]


def agent_session_options(flow_type: str, wire: RunnerSessionOptions) -> AgentSessionOptions:
    """Raises UserError naming the Flow type and the option that is wrong."""
    try:
        return _options(wire)
    except UserError as error:
        raise UserError(
            f"the session options served for flow type {flow_type!r}: {error}"
        ) from None


def _options(wire: RunnerSessionOptions) -> AgentSessionOptions:
    policies: dict[str, ToolPolicy] = {}
    for policy in wire.tool_policies:
        if policy.tool_name in policies:
            raise UserError(f"`tool_policies` names {policy.tool_name!r} twice")
        policies[policy.tool_name] = ToolPolicy(
            effect=_effect(f"tool_policies[{policy.tool_name!r}].effect", policy.effect),
            requires_approval=policy.requires_approval,
        )
    defaults = AgentSessionOptions()
    return AgentSessionOptions(
        tool_policies=policies,
        default_tool_effect=(
            defaults.default_tool_effect
            if wire.default_tool_effect is None
            else _effect("default_tool_effect", wire.default_tool_effect)
        ),
        interrupt_deadline=_seconds(wire.interrupt_deadline_seconds),
        built_in_tools=_built_ins(wire.built_in_tools),
        max_durable_wait=_seconds(wire.max_durable_wait_seconds) or defaults.max_durable_wait,
        plan_mode_enabled=wire.plan_mode_enabled,
        compaction=None if wire.compaction is None else _compaction(wire.compaction),
        retained_message_limit=(
            defaults.retained_message_limit
            if wire.retained_message_limit is None
            else wire.retained_message_limit or None  # 0 keeps every message
        ),
        max_value_bytes=(
            defaults.max_value_bytes if wire.max_value_bytes is None else wire.max_value_bytes
        ),
    )


def _effect(name: str, effect: ToolEffect) -> ToolEffect:
    if effect is ToolEffect.UNSPECIFIED:
        raise UserError(f"`{name}` must be a tool effect")
    return effect


def _seconds(value: int | None) -> timedelta | None:
    return None if value is None else timedelta(seconds=value)


def _built_ins(names: list[str]) -> tuple[BuiltInToolName, ...]:
    for name in names:
        if name not in BUILT_IN_TOOL_NAMES:
            raise UserError(
                f"`built_in_tools`: {name!r} is not a built-in tool "
                f"(one of {', '.join(BUILT_IN_TOOL_NAMES)})"
            )
    return tuple(cast("list[BuiltInToolName]", names))


def _compaction(wire: RunnerCompactionPolicy) -> CompactionPolicy:
    defaults = CompactionPolicy(context_window_tokens=1)
    return CompactionPolicy(
        context_window_tokens=wire.context_window_tokens,
        trigger_ratio=(
            defaults.trigger_ratio if wire.trigger_percent is None else wire.trigger_percent / 100
        ),
        retained_ratio=(
            defaults.retained_ratio
            if wire.retained_percent is None
            else wire.retained_percent / 100
        ),
    )
