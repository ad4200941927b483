"""The turn context to and from its wire form, and the checks the wire's values need.

The runner protocol's values are runner.proto's messages already
(`dex_agents._runner.values`), so RemoteRunner forwards them as they come. Only
the turn context has a wire form of its own (it carries the event writer and
heartbeat in process): this module maps it, both directions in one place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from dex_agents_contracts import (
    MessageRole,
    RunnerToolPolicy,
    RunnerTurnContext,
    Struct,
    struct_from_json,
    struct_to_json,
)

from dex_agents._runner.policies import (
    BUILT_IN_TOOL_NAMES,
    BuiltInToolName,
    ToolPolicy,
)
from dex_agents._runner.values import (
    AgentTurnContext,
    FrameworkMessage,
    Heartbeat,
)
from dex_agents.events import EventWriter

__all__ = ["agent_turn_context", "checked_messages", "session_settings_struct", "turn_context"]

_ROLES = frozenset({MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL})


def checked_messages(messages: Sequence[FrameworkMessage]) -> Sequence[FrameworkMessage]:
    """`messages`, the runner's values as they came; ValueError for one without a role.

    The codec reads a missing role as unspecified, which the session cannot store.
    """
    for message in messages:
        if message.role not in _ROLES:
            raise ValueError(f"a runner message has no role: {message.role!r}")
    return messages


def session_settings_struct(settings: Mapping[str, object]) -> Struct:
    return struct_from_json(dict(settings))


def _tool_policies(policies: Mapping[str, ToolPolicy]) -> list[RunnerToolPolicy]:
    return [
        RunnerToolPolicy(
            tool_name=name,
            effect=policy.effect,
            requires_approval=policy.requires_approval,
        )
        for name, policy in sorted(policies.items())
    ]


def turn_context(turn: AgentTurnContext) -> RunnerTurnContext:
    """The wire form of a turn: everything but its event writer and heartbeat."""
    return RunnerTurnContext(
        flow_id=turn.flow_id,
        turn_id=turn.turn_id,
        attempt=turn.attempt,
        messages=list(turn.messages),
        framework_run_state=turn.framework_run_state,
        tool_calls=list(turn.tool_calls),
        tool_policies=_tool_policies(turn.tool_policies),
        default_tool_effect=turn.default_tool_effect,
        enabled_built_in_tools=list(turn.enabled_built_in_tools),
        session_settings=session_settings_struct(turn.session_settings),
        interaction_mode=turn.interaction_mode,
        plan=turn.plan,
        context_summary=turn.context_summary,
    )


def _built_in_tools(names: Sequence[str]) -> tuple[BuiltInToolName, ...]:
    unknown = [name for name in names if name not in BUILT_IN_TOOL_NAMES]
    if unknown:
        raise ValueError(f"a runner turn names unknown built-in tools: {unknown!r}")
    return tuple(cast(BuiltInToolName, name) for name in names)


def agent_turn_context(
    wire: RunnerTurnContext, *, events: EventWriter, heartbeat: Heartbeat
) -> AgentTurnContext:
    """The turn `turn_context` wrote, given back its event writer and heartbeat.

    A recorded turn (a run-state fixture) is replayed to an in-process runner
    through this. Raises ValueError for a built-in tool name this core does not know.
    """
    return AgentTurnContext(
        flow_id=wire.flow_id,
        turn_id=wire.turn_id,
        attempt=wire.attempt,
        messages=list(wire.messages),
        framework_run_state=wire.framework_run_state,
        tool_calls=list(wire.tool_calls),
        tool_policies={
            policy.tool_name: ToolPolicy(
                effect=policy.effect, requires_approval=policy.requires_approval
            )
            for policy in wire.tool_policies
        },
        default_tool_effect=wire.default_tool_effect,
        events=events,
        heartbeat=heartbeat,
        enabled_built_in_tools=_built_in_tools(wire.enabled_built_in_tools),
        session_settings=(
            struct_to_json(wire.session_settings) if wire.session_settings is not None else {}
        ),
        interaction_mode=wire.interaction_mode,
        plan=wire.plan,
        context_summary=wire.context_summary,
    )
