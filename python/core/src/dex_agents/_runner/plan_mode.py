"""Plan mode for any runner: the plan note before the turn, and only write_todos offered.

The session decides a turn's `interaction_mode` and keeps the plan; a runner that
declares plan_mode shows the model the plan (the note, as user text before the
turn's messages) and, in a planning turn, offers write_todos alone. Both work on
what every runner already has (the stored messages and the enabled built-ins),
so an adapter maps them to its framework and keeps no plan logic of its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from datetime import UTC, datetime

from dex_agents_contracts import AgentMessage, AgentPlan, InteractionMode, PlanStatus

from dex_agents._runner.policies import BuiltInToolName
from dex_agents._runner.values import AgentTurnContext, FrameworkMessage, message_record

__all__ = [
    "NOTE_SEQUENCE",
    "build_plan_note",
    "in_planning_turn",
    "is_planning",
    "planning_turn",
    "turn_built_ins",
    "with_plan_note",
]

_PLANNING_LINE = (
    "This turn only plans: write or revise the plan with write_todos, and do not do or "
    "claim any of its tasks. The user reviews the plan before it runs."
)
_WRITE_TODOS: BuiltInToolName = "write_todos"


def build_plan_note(plan: AgentPlan | None, interaction_mode: InteractionMode) -> str | None:
    """The note's text, or None when there is nothing to show.

    A missing or cleared plan shows only in a planning turn.
    """
    planning = interaction_mode == InteractionMode.PLANNING
    if plan is None or plan.status == PlanStatus.CLEARED:
        return f"[Dex] There is no plan yet.\n{_PLANNING_LINE}" if planning else None
    lines = [f"[Dex] The current plan, revision {plan.revision}, is {plan.status.name.lower()}:"]
    lines.extend(f"- [{task.status.name.lower()}] {task.content}" for task in plan.tasks)
    if planning:
        lines.append(_PLANNING_LINE)
    return "\n".join(lines)


def is_planning(turn: AgentTurnContext) -> bool:
    """A planning turn: the model may only write the plan, so the agent's own tools are hidden."""
    return turn.interaction_mode == InteractionMode.PLANNING


def turn_built_ins(turn: AgentTurnContext) -> tuple[BuiltInToolName, ...]:
    """The built-ins to offer: the enabled ones, or write_todos alone in a planning turn."""
    if is_planning(turn):
        return tuple(name for name in turn.enabled_built_in_tools if name == _WRITE_TODOS)
    return turn.enabled_built_in_tools


NOTE_SEQUENCE = -1
"""The plan note's `sequence`: it is shown to the model, never stored."""


def with_plan_note(
    turn: AgentTurnContext, build_user_message: Callable[[str], FrameworkMessage]
) -> list[AgentMessage]:
    """The turn's stored messages with the plan note (when there is one) before the
    first message of the current turn, built as the runner builds a user message."""
    note = build_plan_note(turn.plan, turn.interaction_mode)
    messages = list(turn.messages)
    if note is None:
        return messages
    at = next((i for i, m in enumerate(messages) if m.turn_id == turn.turn_id), len(messages))
    stored_at = messages[at].created_at if at < len(messages) else None
    created_at = stored_at or datetime.now(UTC)
    record = message_record(
        build_user_message(note),
        sequence=NOTE_SEQUENCE,
        turn_id=turn.turn_id,
        created_at=created_at,
    )
    messages.insert(at, record)
    return messages


_PLANNING: ContextVar[bool] = ContextVar("dex_agents_planning_turn", default=False)


@contextlib.contextmanager
def planning_turn(turn: AgentTurnContext) -> Iterator[None]:
    """Whether `turn` plans, for the run inside this block (see `in_planning_turn`).

    For a framework whose tools are fixed when the runner builds its agents but
    which asks each tool before every model call (an `is_enabled`): the turn's mode
    reaches the tool through this context variable, which the framework's tasks
    inherit, so concurrent sessions never see each other's.
    """
    token = _PLANNING.set(is_planning(turn))
    try:
        yield
    finally:
        _PLANNING.reset(token)


def in_planning_turn() -> bool:
    """Whether the run in progress plans, so the agent's own tools are hidden."""
    return _PLANNING.get()
