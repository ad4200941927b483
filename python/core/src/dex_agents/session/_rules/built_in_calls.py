"""How RunModel routes built-in tool calls: argument checks, write_todos, planning refusals.

Built-in calls never reach a tool Step. RunModel validates them in its own
commit; an invalid call and every write_todos call become final there, and
ask_user and durable_wait move on to their waiting Steps (found in the Step table).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from dex import AsyncContext, StepMovement
from dex_agents_contracts import (
    AgentInterrupt,
    AgentPlan,
    AgentPlanTask,
    AgentToolCall,
    InteractionMode,
    PlanStatus,
    PlanTaskStatus,
    PlanUpdatedPayload,
    TimerStartedPayload,
    ToolCallStatus,
    ToolEffect,
)

from dex_agents._runner.values import pending_record
from dex_agents.results import compact_json
from dex_agents.runner import DeferredToolCall
from dex_agents.session._event_writer import StepEventWriter
from dex_agents.session._rules.questions import raise_ask_user
from dex_agents.session._runtime import SessionRuntime

__all__ = [
    "NOT_A_JSON_OBJECT",
    "PLANNING_TURN_REJECTION",
    "WRITE_TODOS_REPEATED",
    "AskUserArguments",
    "BuiltInArgumentError",
    "BuiltInCallRouter",
    "DurableWaitArguments",
    "parse_ask_user",
    "parse_durable_wait",
    "parse_todos",
    "start_durable_wait",
]

ParsedT = TypeVar("ParsedT")

NOT_A_JSON_OBJECT = "arguments must be a JSON object"
PLANNING_TURN_REJECTION = "The tool call was not run: a planning turn can only call write_todos."
WRITE_TODOS_REPEATED = "write_todos was called more than once in one response"

_TASK_STATUSES: Mapping[str, PlanTaskStatus] = {
    "pending": PlanTaskStatus.PENDING,
    "in_progress": PlanTaskStatus.IN_PROGRESS,
    "completed": PlanTaskStatus.COMPLETED,
}


class BuiltInArgumentError(Exception):
    """Arguments a built-in refuses; the message is the reason only, without the prefix."""


@dataclass(frozen=True)
class AskUserArguments:
    question: str
    choices: tuple[str, ...]
    allows_free_text: bool


@dataclass(frozen=True)
class DurableWaitArguments:
    seconds: int
    reason: str


def _json_object(arguments: str) -> dict[str, object]:
    """Strict JSON object text: NaN and Infinity are not JSON, so they are refused too."""

    def refuse(constant: str) -> object:
        raise ValueError(constant)

    try:
        value = json.loads(arguments, parse_constant=refuse)
    except (ValueError, TypeError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise BuiltInArgumentError(NOT_A_JSON_OBJECT)
    return value


def _first_unknown(values: Mapping[str, object], known: Sequence[str]) -> str | None:
    """The lowest unknown name by code point, so both cores name the same one, as JSON text."""
    unknown = sorted(name for name in values if name not in known)
    return json.dumps(unknown[0], ensure_ascii=False) if unknown else None


def _refuse_unknown_arguments(values: Mapping[str, object], known: Sequence[str]) -> None:
    name = _first_unknown(values, known)
    if name is not None:
        raise BuiltInArgumentError(f"unknown argument {name}")


def parse_ask_user(arguments: str) -> AskUserArguments:
    """ask_user's arguments; null for an optional argument means it is absent."""
    values = _json_object(arguments)
    _refuse_unknown_arguments(values, ("question", "choices", "allows_free_text"))
    question = values.get("question")
    if not isinstance(question, str) or not question.strip():
        raise BuiltInArgumentError("question must be a non-blank string")
    raw_choices = values.get("choices")
    if raw_choices is None:
        choices: tuple[str, ...] = ()
    elif isinstance(raw_choices, list) and all(isinstance(c, str) for c in raw_choices):
        choices = tuple(raw_choices)
    else:
        raise BuiltInArgumentError("choices must be a list of strings")
    raw_free_text = values.get("allows_free_text")
    if raw_free_text is None:
        allows_free_text = True
    elif isinstance(raw_free_text, bool):
        allows_free_text = raw_free_text
    else:
        raise BuiltInArgumentError("allows_free_text must be a boolean")
    if not allows_free_text and not choices:
        raise BuiltInArgumentError("allows_free_text is false but there are no choices")
    return AskUserArguments(question=question, choices=choices, allows_free_text=allows_free_text)


def parse_durable_wait(arguments: str, max_wait: timedelta) -> DurableWaitArguments:
    """durable_wait's arguments: whole seconds from 1 up to `max_wait`, and a reason."""
    values = _json_object(arguments)
    _refuse_unknown_arguments(values, ("seconds", "reason"))
    seconds = values.get("seconds")
    # JSON has one number type: 5.0 is the integer 5, as it is for a JavaScript core.
    if isinstance(seconds, float) and math.isfinite(seconds) and seconds.is_integer():
        seconds = int(seconds)
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise BuiltInArgumentError("seconds must be an integer")
    if seconds < 1:
        raise BuiltInArgumentError("seconds must be at least 1")
    limit = int(max_wait.total_seconds())
    if seconds > limit:
        raise BuiltInArgumentError(f"seconds must be at most {limit}")
    reason = values.get("reason")
    if not isinstance(reason, str):
        raise BuiltInArgumentError("reason must be a string")
    return DurableWaitArguments(seconds=seconds, reason=reason)


def parse_todos(arguments: str) -> list[AgentPlanTask]:
    """write_todos's task list, in order; an empty list clears the plan."""
    values = _json_object(arguments)
    _refuse_unknown_arguments(values, ("todos",))
    todos = values.get("todos")
    if not isinstance(todos, list):
        raise BuiltInArgumentError("todos must be a list")
    tasks: list[AgentPlanTask] = []
    for index, item in enumerate(todos):
        if not isinstance(item, dict):
            raise BuiltInArgumentError(f"todos[{index}] must be an object")
        unknown = _first_unknown(item, ("content", "status"))
        if unknown is not None:
            raise BuiltInArgumentError(f"todos[{index}] has unknown field {unknown}")
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            raise BuiltInArgumentError(f"todos[{index}].content must be a non-blank string")
        status = item.get("status")
        if not isinstance(status, str) or status not in _TASK_STATUSES:
            raise BuiltInArgumentError(
                f"todos[{index}].status must be pending, in_progress or completed"
            )
        tasks.append(AgentPlanTask(content=content, status=_TASK_STATUSES[status]))
    return tasks


def _plan_status(tasks: Sequence[AgentPlanTask], planning: bool) -> PlanStatus:
    if not tasks:
        return PlanStatus.CLEARED
    if planning:
        return PlanStatus.DRAFT
    if all(task.status is PlanTaskStatus.COMPLETED for task in tasks):
        return PlanStatus.COMPLETED
    return PlanStatus.ACTIVE


def start_durable_wait(
    runtime: SessionRuntime,
    context: AsyncContext,
    record: AgentToolCall,
    *,
    seconds: int,
    reason: str,
    events: StepEventWriter,
    now: datetime,
) -> StepMovement[str]:
    """RunModel's durable_wait call: waiting_for_timer until now + seconds."""
    record.status = ToolCallStatus.WAITING_FOR_TIMER
    record.wait_until = now + timedelta(seconds=seconds)
    runtime.schema.tool_calls.set(context, record.tool_call_id, record)
    events.write(
        TimerStartedPayload(
            tool_call_id=record.tool_call_id, wait_until=record.wait_until, reason=reason
        )
    )
    return StepMovement.of(runtime.steps.await_timer, record.tool_call_id)


class BuiltInCallRouter:
    """Routes the built-in calls of one model response inside RunModel's commit."""

    def __init__(
        self,
        runtime: SessionRuntime,
        context: AsyncContext,
        *,
        interaction_mode: InteractionMode,
        calls: Sequence[DeferredToolCall],
        raised: list[AgentInterrupt],
        events: StepEventWriter,
        now: datetime,
    ) -> None:
        self._runtime = runtime
        self._context = context
        self._enabled = frozenset(runtime.options.built_in_tools)
        self._planning = interaction_mode is InteractionMode.PLANNING
        self._raised = raised
        self._events = events
        self._now = now
        self._write_todos_repeated = (
            "write_todos" in self._enabled
            and sum(1 for call in calls if call.tool_name == "write_todos") > 1
        )

    def is_built_in(self, call: DeferredToolCall) -> bool:
        """An enabled built-in name is reserved; a disabled one is an ordinary tool."""
        return call.tool_name in self._enabled

    def handles(self, call: DeferredToolCall) -> bool:
        """Whether RunModel settles or routes this call here instead of a tool Step."""
        return self.is_built_in(call) or self._planning

    def record_for(self, call: DeferredToolCall, *, turn_id: str, order: int) -> AgentToolCall:
        """The pending record; built-ins take the read effect and need no approval."""
        record = pending_record(call, turn_id=turn_id, deferral_order=order)
        if self.is_built_in(call):
            record.effect = ToolEffect.READ
            record.requires_approval = False
            record.status = ToolCallStatus.APPROVED
        return record

    def route(self, record: AgentToolCall) -> StepMovement[str] | None:
        """Settle or route a stored pending record; None when it became final here."""
        name = record.tool_name
        if self._planning and not (name == "write_todos" and name in self._enabled):
            record.status = ToolCallStatus.REJECTED
            record.rejection_message = PLANNING_TURN_REJECTION
            self._finish(record)
            return None
        if name == "write_todos":
            self._write_todos(record)
            return None
        if name == "ask_user":
            return self._ask_user(record)
        if name == "durable_wait":
            return self._durable_wait(record)
        raise ValueError(f"{name!r} is not a built-in tool")

    def _finish(self, record: AgentToolCall) -> None:
        self._runtime.finalize_record(self._context, record, self._events)

    def _fail(self, record: AgentToolCall, error: str) -> None:
        record.status = ToolCallStatus.FAILED
        record.error = error
        self._finish(record)

    def _parsed(
        self, record: AgentToolCall, parse: Callable[[str], ParsedT], what: str
    ) -> ParsedT | None:
        """The call's parsed arguments, or None once it failed as `invalid <what>: ...`."""
        try:
            return parse(record.arguments)
        except BuiltInArgumentError as error:
            self._fail(record, f"invalid {what}: {error}")
            return None

    def _ask_user(self, record: AgentToolCall) -> StepMovement[str] | None:
        arguments = self._parsed(record, parse_ask_user, "ask_user arguments")
        if arguments is None:
            return None
        return raise_ask_user(
            self._runtime,
            self._context,
            record,
            question=arguments.question,
            choices=list(arguments.choices),
            allows_free_text=arguments.allows_free_text,
            raised=self._raised,
            events=self._events,
            now=self._now,
        )

    def _durable_wait(self, record: AgentToolCall) -> StepMovement[str] | None:
        max_wait = self._runtime.options.max_durable_wait
        arguments = self._parsed(
            record, lambda text: parse_durable_wait(text, max_wait), "durable_wait arguments"
        )
        if arguments is None:
            return None
        return start_durable_wait(
            self._runtime,
            self._context,
            record,
            seconds=arguments.seconds,
            reason=arguments.reason,
            events=self._events,
            now=self._now,
        )

    def _write_todos(self, record: AgentToolCall) -> None:
        if self._write_todos_repeated:
            self._fail(record, WRITE_TODOS_REPEATED)
            return
        tasks = self._parsed(record, parse_todos, "todos")
        if tasks is None:
            return
        schema = self._runtime.schema
        current = schema.plan.get(self._context)
        revision = (current.revision if current is not None else 0) + 1
        status = _plan_status(tasks, self._planning)
        schema.plan.set(
            self._context,
            AgentPlan(revision=revision, status=status, tasks=tasks, updated_at=self._now),
        )
        self._events.write(
            PlanUpdatedPayload(revision=revision, status=status, task_count=len(tasks))
        )
        if status is PlanStatus.CLEARED:
            output = compact_json({"status": "cleared", "revision": revision})
        else:
            output = compact_json(
                {"status": "updated", "revision": revision, "task_count": len(tasks)}
            )
        record.status = ToolCallStatus.SUCCEEDED
        record.output = output
        self._finish(record)
