"""`frames.turn_context` and its reverse `frames.agent_turn_context` through wire JSON.

The reverse replays recorded turns (run-state fixtures) to in-process runners, so
a turn must come back with every field `run_model_step` reads. The module is
private (`dex_agents._remote`), hence the import of internals.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from dex_agents import ToolPolicy
from dex_agents._remote import frames
from dex_agents.offline import NullEventWriter, no_heartbeat
from dex_agents.runner import AgentTurnContext
from dex_agents_contracts import (
    AgentMessage,
    AgentPlan,
    AgentToolCall,
    ContextSummary,
    InteractionMode,
    MessageRole,
    PlanStatus,
    ToolCallStatus,
    ToolEffect,
    decode_runner_turn_context,
    encode_runner_turn_context,
)

_AT = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def _turn() -> AgentTurnContext:
    return AgentTurnContext(
        flow_id="s-1",
        turn_id="t-2",
        attempt=3,
        messages=[
            AgentMessage(
                sequence=1,
                turn_id="t-2",
                role=MessageRole.USER,
                text="book Rome",
                framework_item='{"kind": "request"}',
                created_at=_AT,
            )
        ],
        framework_run_state='{"state": 1}',
        tool_calls=[
            AgentToolCall(
                tool_call_id="k1",
                turn_id="t-2",
                tool_name="book_trip",
                arguments='{"city": "Rome"}',
                effect=ToolEffect.NON_IDEMPOTENT_WRITE,
                requires_approval=True,
                status=ToolCallStatus.SUCCEEDED,
                output="booked Rome",
            )
        ],
        tool_policies={
            "book_trip": ToolPolicy(effect=ToolEffect.NON_IDEMPOTENT_WRITE),
            "get_weather": ToolPolicy(effect=ToolEffect.READ, requires_approval=False),
        },
        default_tool_effect=ToolEffect.IDEMPOTENT_WRITE,
        events=NullEventWriter(),
        heartbeat=no_heartbeat,
        enabled_built_in_tools=("ask_user", "write_todos"),
        session_settings={"model": "small", "limits": {"tokens": 10}},
        interaction_mode=InteractionMode.PLANNING,
        plan=AgentPlan(revision=2, status=PlanStatus.DRAFT),
        context_summary=ContextSummary(
            generation=1, first_sequence=1, last_sequence=4, text="earlier", created_at=_AT
        ),
    )


def test_a_turn_survives_wire_json_and_comes_back_whole() -> None:
    turn = _turn()
    wire = decode_runner_turn_context(encode_runner_turn_context(frames.turn_context(turn)))
    writer = NullEventWriter()
    back = frames.agent_turn_context(wire, events=writer, heartbeat=no_heartbeat)

    assert back.events is writer
    assert back.heartbeat is no_heartbeat
    for name in (
        "flow_id",
        "turn_id",
        "attempt",
        "framework_run_state",
        "tool_policies",
        "default_tool_effect",
        "enabled_built_in_tools",
        "session_settings",
        "interaction_mode",
    ):
        assert getattr(back, name) == getattr(turn, name), name
    # Contract messages compare by their wire form (betterproto2 messages have no __eq__).
    assert encode_runner_turn_context(frames.turn_context(back)) == encode_runner_turn_context(
        frames.turn_context(turn)
    )


def test_an_unknown_built_in_tool_is_refused() -> None:
    wire = frames.turn_context(_turn())
    wire.enabled_built_in_tools = ["ask_user", "teleport"]
    with pytest.raises(ValueError, match="teleport"):
        frames.agent_turn_context(wire, events=NullEventWriter(), heartbeat=no_heartbeat)
