"""Span attributes built from what a Step knows, with no OpenTelemetry import.

Keys are literals: the semantic-conventions package has no constant for some
of them, and a literal reads the same in the README table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dex_agents_contracts import AgentToolCall, AgentUsage

from dex_agents._runner.values import ModelCallMetadata
from dex_agents.tracing._profiles import ConventionProfile

__all__ = [
    "AttributeValue",
    "Attributes",
    "StepIdentity",
    "chat_attributes",
    "content_json",
    "root_attributes",
    "step_attributes",
    "tool_attributes",
]

AttributeValue = str | bool | int | float | Sequence[str] | Sequence[int]
Attributes = dict[str, AttributeValue]

_OTHER = "_OTHER"


@dataclass(frozen=True)
class StepIdentity:
    """Which Step attempt a span belongs to: the keys every span carries."""

    flow_id: str
    run_id: str
    step_type: str
    step_execution_id: str
    attempt: int


def step_attributes(step: StepIdentity, turn_id: str | None) -> Attributes:
    """The design's keys on every span: conversation, session, Flow, run, Step, turn."""
    attributes: Attributes = {
        "gen_ai.conversation.id": step.flow_id,
        "session.id": step.flow_id,
        "dex.flow.id": step.flow_id,
        "dex.run.id": step.run_id,
        "dex.step.type": step.step_type,
        "dex.step.execution_id": step.step_execution_id,
        "dex.step.attempt": step.attempt,
    }
    if turn_id is not None:
        attributes["dex.agent.turn.id"] = turn_id
    return attributes


def root_attributes(
    profile: ConventionProfile,
    step: StepIdentity,
    *,
    agent_name: str,
    turn_id: str | None,
    activation: str,
    tool_call_id: str | None,
) -> Attributes:
    attributes = step_attributes(step, turn_id)
    attributes["gen_ai.operation.name"] = "invoke_agent"
    attributes["gen_ai.agent.name"] = agent_name
    attributes["dex.agent.activation"] = activation
    if profile.provider_on_root:
        attributes[profile.provider_key] = _OTHER
    if tool_call_id is not None:
        attributes["gen_ai.tool.call.id"] = tool_call_id
    return attributes


def chat_attributes(
    profile: ConventionProfile,
    step: StepIdentity,
    *,
    agent_name: str,
    turn_id: str,
    metadata: ModelCallMetadata | None,
    usage: AgentUsage | None,
) -> Attributes:
    """`usage` is None on an INTERNAL span (no single reported model call)."""
    attributes = step_attributes(step, turn_id)
    attributes["gen_ai.operation.name"] = "chat"
    attributes["gen_ai.agent.name"] = agent_name
    provider = metadata.provider_name if metadata is not None else None
    if provider:
        attributes[profile.provider_key] = provider
    elif profile.provider_on_root:
        attributes[profile.provider_key] = _OTHER  # 1.36.0 requires the key
    if metadata is not None:
        _set_if(attributes, "gen_ai.request.model", metadata.request_model)
        _set_if(attributes, "gen_ai.response.model", metadata.response_model)
        _set_if(attributes, "gen_ai.response.id", metadata.response_id)
        if metadata.finish_reasons:
            attributes["gen_ai.response.finish_reasons"] = list(metadata.finish_reasons)
    if usage is not None:
        for field_name, key in profile.usage_keys:
            attributes[key] = int(getattr(usage, field_name))
    return attributes


def tool_attributes(
    profile: ConventionProfile,
    step: StepIdentity,
    *,
    agent_name: str,
    record: AgentToolCall,
) -> Attributes:
    attributes = step_attributes(step, record.turn_id)
    attributes["gen_ai.operation.name"] = "execute_tool"
    attributes["gen_ai.agent.name"] = agent_name
    attributes["gen_ai.tool.name"] = record.tool_name
    attributes["gen_ai.tool.call.id"] = record.tool_call_id
    if profile.tool_type_key is not None:
        attributes[profile.tool_type_key] = "function"
    attributes["dex.tool.effect"] = str(record.effect.name).lower()
    return attributes


def _set_if(attributes: Attributes, key: str, value: str | None) -> None:
    if value:
        attributes[key] = value


def content_json(messages: Iterable[Any]) -> str:
    """Messages as the conventions' `{role, parts}` JSON (text, tool calls, tool results).

    Takes stored AgentMessages and FrameworkMessages alike: both project a
    message into role, text and tool fields.
    """
    shaped: list[Mapping[str, object]] = []
    for message in messages:
        role = getattr(message, "role", "")
        role_name = role if isinstance(role, str) else str(getattr(role, "name", role)).lower()
        parts: list[Mapping[str, object]] = []
        text = getattr(message, "text", None)
        tool_call_id = getattr(message, "tool_call_id", None)
        output = getattr(message, "tool_output", None)
        if role_name == "tool" and tool_call_id:
            parts.append({"type": "tool_call_response", "id": tool_call_id, "response": output})
        elif text:
            parts.append({"type": "text", "content": text})
        if role_name == "assistant" and tool_call_id:
            parts.append(
                {
                    "type": "tool_call",
                    "id": tool_call_id,
                    "name": getattr(message, "tool_name", None),
                    "arguments": getattr(message, "tool_arguments", None),
                }
            )
        shaped.append({"role": role_name, "parts": parts})
    return json.dumps(shaped, ensure_ascii=False)
