"""The enum strings of the tree are exactly the strings the wire format promises."""

from __future__ import annotations

from dex_agents_contracts import (
    ENUM_WIRE_STRINGS,
    AgentStatus,
    CancellationReason,
    InteractionMode,
    InterruptKind,
    MessageRole,
    PlanStatus,
    PlanTaskStatus,
    QuestionResolution,
    ToolCallStatus,
    ToolEffect,
    TurnControlKind,
)

# Written out by hand, not derived from the protos: stored sessions, Dex Web and the
# TypeScript package read these strings, so renaming an enum value in proto/ must
# fail here. docs/wire-format.md gives the rule that turns value names into them.
WIRE_STRINGS: dict[type[object], list[str]] = {
    AgentStatus: [
        "waiting_for_user_message",
        "running_model",
        "running_tools",
        "compacting_context",
        "failed",
    ],
    InteractionMode: ["chat", "planning", "executing"],
    MessageRole: ["user", "assistant", "tool"],
    ToolEffect: ["read", "idempotent_write", "non_idempotent_write", "unclassified"],
    ToolCallStatus: [
        "awaiting_approval",
        "approved",
        "awaiting_answer",
        "waiting_for_timer",
        "waiting_for_task",
        "rejected",
        "succeeded",
        "failed",
        "outcome_unknown",
    ],
    QuestionResolution: ["answered", "declined", "deadline_passed"],
    InterruptKind: ["tool_approval", "question"],
    CancellationReason: ["steered", "turn_cancelled"],
    TurnControlKind: ["steer", "cancel_turn"],
    PlanStatus: ["draft", "active", "completed", "cleared"],
    PlanTaskStatus: ["pending", "in_progress", "completed"],
}


def test_every_enum_of_the_tree_is_checked() -> None:
    assert set(ENUM_WIRE_STRINGS) == set(WIRE_STRINGS)


def test_enum_strings_match_the_wire_format() -> None:
    for enum, strings in WIRE_STRINGS.items():
        assert list(ENUM_WIRE_STRINGS[enum].values()) == strings, enum.__name__


def test_unspecified_has_no_wire_string() -> None:
    for table in ENUM_WIRE_STRINGS.values():
        assert 0 not in table
