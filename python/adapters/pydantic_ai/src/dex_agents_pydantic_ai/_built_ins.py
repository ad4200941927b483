"""The session's built-in tools as Pydantic AI external tools.

The session runs ask_user, durable_wait and write_todos itself: RunModel routes
their calls to its own Steps. The model Step therefore offers each enabled
built-in as a tool of an `ExternalToolset`, with the core's model-facing
definition, so a call ends the run as a deferred request like every other call
and its result comes back through `DeferredToolResults` with the others. An
enabled built-in's name is reserved: an application tool with that name would
make the call ambiguous, so the model Step refuses it with the kit's
`ReservedToolNameError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS, ReservedToolNameError
from dex_agents._runner.policies import BuiltInToolName
from pydantic_ai import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ExternalToolset

__all__ = ["ReservedToolNameError", "built_in_tool_definitions", "with_built_ins"]


def built_in_tool_definitions(names: Iterable[BuiltInToolName]) -> list[ToolDefinition]:
    """Pydantic AI definitions of the named built-ins, exactly as the core describes them."""
    definitions: list[ToolDefinition] = []
    for name in names:
        core = BUILT_IN_TOOL_DEFINITIONS[name]
        # A plain-JSON copy: the core's schema is read-only shared data, and
        # Pydantic AI hands the schema to model providers that may mutate it.
        schema: dict[str, Any] = json.loads(json.dumps(core.parameters))
        definitions.append(
            ToolDefinition(
                name=core.name,
                description=core.description,
                parameters_json_schema=schema,
            )
        )
    return definitions


def check_reserved(tool_names: Iterable[str], reserved: frozenset[str]) -> None:
    """Raises `ReservedToolNameError` for the first (by name) tool that takes a reserved name."""
    taken = sorted(name for name in tool_names if name in reserved)
    if taken:
        raise ReservedToolNameError(taken[0], "the Pydantic AI agent")


def with_built_ins(
    toolset: AbstractToolset[Any], built_ins: Sequence[ToolDefinition]
) -> AbstractToolset[Any]:
    """The application's toolset plus the built-ins, as external tools."""
    if not built_ins:
        return toolset
    return CombinedToolset([toolset, ExternalToolset(list(built_ins))])
