"""The model-facing definitions of the session's built-in tools.

The session validates and runs these calls itself (RunModel routes them to their
own Steps); a runner only offers the enabled ones to its model like any tool,
translated to its framework's tool definition. An enabled built-in's name is
reserved: an application tool with that name would make its calls ambiguous, so
`offered_built_ins` refuses it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar

from dex_agents._runner.policies import BuiltInToolName
from dex_agents.errors import UserError
from dex_agents.models import ToolDefinition

__all__ = [
    "BUILT_IN_TOOL_DEFINITIONS",
    "ReservedToolNameError",
    "is_offered",
    "offered_built_ins",
    "offering",
]

BUILT_IN_TOOL_DEFINITIONS: Mapping[BuiltInToolName, ToolDefinition] = {
    "ask_user": ToolDefinition(
        name="ask_user",
        description=(
            "Ask the user a question and wait for the answer. Use it when you cannot "
            "continue without information only the user has."
        ),
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "The question to ask."},
                "choices": {
                    "type": ["array", "null"],
                    "items": {"type": "string"},
                    "description": "Answers the user may pick from; omit for a free answer.",
                },
                "allows_free_text": {
                    "type": ["boolean", "null"],
                    "description": "Whether the user may answer outside `choices` (default true).",
                },
            },
            "required": ["question"],
            "additionalProperties": False,
        },
    ),
    "durable_wait": ToolDefinition(
        name="durable_wait",
        description=("Wait for a number of seconds before continuing; the wait survives restarts."),
        parameters={
            "type": "object",
            "properties": {
                "seconds": {"type": "integer", "minimum": 1, "description": "How long to wait."},
                "reason": {"type": "string", "description": "Why the wait is needed."},
            },
            "required": ["seconds", "reason"],
            "additionalProperties": False,
        },
    ),
    "write_todos": ToolDefinition(
        name="write_todos",
        description=(
            "Replace the plan with this task list. Keep each task's status current; "
            "an empty list clears the plan."
        ),
        parameters={
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "content": {"type": "string"},
                            "status": {
                                "type": "string",
                                "enum": ["pending", "in_progress", "completed"],
                            },
                        },
                        "required": ["content", "status"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["todos"],
            "additionalProperties": False,
        },
    ),
}


class ReservedToolNameError(UserError):
    """An application tool uses the name of a built-in tool the session enables.

    Attributes:
        tool_name: The tool's name, which is also the built-in's.
        owner: What has the tool, as the message names it ("the graph", ...).
    """

    def __init__(self, tool_name: str, owner: str = "the agent") -> None:
        super().__init__(
            f"{owner} has a tool named {tool_name!r}, the name of a built-in tool this "
            "session enables (`AgentSessionOptions.built_in_tools`), which the session "
            f"reserves: rename the tool, or leave {tool_name!r} out of `built_in_tools`"
        )
        self.tool_name = tool_name
        self.owner = owner

    def __reduce__(self) -> tuple[type[ReservedToolNameError], tuple[str, str]]:
        return (type(self), (self.tool_name, self.owner))


def offered_built_ins(
    enabled: Iterable[BuiltInToolName], tool_names: Iterable[str], *, owner: str
) -> list[ToolDefinition]:
    """The enabled built-ins' definitions, to offer next to the application's tools.

    Raises:
        ReservedToolNameError: For the first (by name) of `tool_names` that an
            enabled built-in reserves.
    """
    definitions = [BUILT_IN_TOOL_DEFINITIONS[name] for name in enabled]
    reserved = {definition.name for definition in definitions}
    taken = sorted(name for name in tool_names if name in reserved)
    if taken:
        raise ReservedToolNameError(taken[0], owner)
    return definitions


_OFFERED: ContextVar[frozenset[str]] = ContextVar(
    "dex_agents_offered_built_ins", default=frozenset()
)


@contextlib.contextmanager
def offering(names: Iterable[str]) -> Iterator[None]:
    """The built-ins `names` are the model's tools while the run inside this block lasts.

    For a framework whose tools are fixed when the runner builds its agents but which
    asks each tool before every model call (an `is_enabled`, a request hook): the
    turn's choice reaches the tool through this context variable, which the tasks
    the framework starts inherit, so concurrent sessions never see each other's.
    """
    token = _OFFERED.set(frozenset(names))
    try:
        yield
    finally:
        _OFFERED.reset(token)


def is_offered(name: str) -> bool:
    """Whether the run in progress offers the built-in `name` (see `offering`)."""
    return name in _OFFERED.get()
