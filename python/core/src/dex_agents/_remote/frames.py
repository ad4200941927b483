"""The runner protocol's plain data to and from the runner service's wire messages.

The protocol already carries only plain data (architecture.md); this module is
the one place that maps it, so both directions stay symmetric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, cast

from dex_agents_contracts import (
    MessageRole,
    RunnerDeferredToolCall,
    RunnerFrameworkMessage,
    RunnerModelCallMetadata,
    RunnerToolPolicy,
    RunnerTurnContext,
    Struct,
    struct_from_json,
    struct_to_json,
)

from dex_agents._runner.policies import (
    BUILT_IN_TOOL_NAMES,
    BuiltInToolName,
    ResolvedToolPolicy,
    ToolPolicy,
)
from dex_agents._runner.protocol import (
    AgentTurnContext,
    DeferredToolCall,
    FrameworkMessage,
    Heartbeat,
    ModelCallMetadata,
)
from dex_agents.events import EventWriter

__all__ = [
    "agent_turn_context",
    "framework_message",
    "framework_messages",
    "model_call_metadata",
    "session_settings_struct",
    "tool_calls",
    "turn_context",
]

_ROLES: Mapping[MessageRole, Literal["user", "assistant", "tool"]] = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.TOOL: "tool",
}


def framework_message(wire: RunnerFrameworkMessage) -> FrameworkMessage:
    """Raises ValueError for a message without a role (the codec reads it as unspecified)."""
    role = _ROLES.get(wire.role)
    if role is None:
        raise ValueError(f"a runner message has no role: {wire.role!r}")
    return FrameworkMessage(
        role=role,
        framework_item=wire.framework_item,
        text=wire.text,
        tool_call_id=wire.tool_call_id,
        tool_name=wire.tool_name,
        tool_arguments=wire.tool_arguments,
        tool_output=wire.tool_output,
    )


def framework_messages(wire: Sequence[RunnerFrameworkMessage]) -> list[FrameworkMessage]:
    return [framework_message(message) for message in wire]


def model_call_metadata(wire: RunnerModelCallMetadata | None) -> ModelCallMetadata | None:
    if wire is None:
        return None
    return ModelCallMetadata(
        request_model=wire.request_model,
        response_model=wire.response_model,
        provider_name=wire.provider_name,
        response_id=wire.response_id,
        finish_reasons=tuple(wire.finish_reasons),
    )


def tool_calls(wire: Sequence[RunnerDeferredToolCall]) -> list[DeferredToolCall]:
    return [
        DeferredToolCall(
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            arguments=call.arguments,
            policy=ResolvedToolPolicy(effect=call.effect, requires_approval=call.requires_approval),
            tool_source_reference=call.tool_source_reference,
        )
        for call in wire
    ]


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
