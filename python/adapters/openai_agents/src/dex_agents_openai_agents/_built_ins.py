"""The session's built-in tools as gated function tools of every agent.

The session runs ask_user, durable_wait and write_todos itself: RunModel routes
their calls to its own Steps. Every agent copy of `GatedGraph` therefore carries
one `FunctionTool` per built-in, with the core's model-facing definition, gated
like the application's tools: a call ends the run as an interruption, which the
runner defers with the built-in policy, and once the session has recorded the
call's result the approved call returns it. Which built-ins a turn enables is
the session's choice per turn while the gated agents are built once, so each
tool's `is_enabled` (which the SDK asks before every model call) asks the kit's
`is_offered`, set around the run by its `offering`.
"""

from __future__ import annotations

import json
from typing import Any

from agents import AgentBase, FunctionTool, RunContextWrapper
from agents.tool_context import ToolContext
from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS, is_offered
from dex_agents._runner.call_results import stored_result
from dex_agents.models import ToolDefinition

__all__ = ["built_in_tools"]


def built_in_tools() -> list[FunctionTool]:
    """One gated function tool per built-in, offered only in a turn that enables it."""
    return [_gated_built_in(definition) for definition in BUILT_IN_TOOL_DEFINITIONS.values()]


def _gated_built_in(definition: ToolDefinition) -> FunctionTool:
    name = definition.name

    async def return_stored(ctx: ToolContext[Any], _arguments: str) -> str:
        return stored_result(name, ctx.tool_call_id)

    def enabled(_context: RunContextWrapper[Any], _agent: AgentBase[Any]) -> bool:
        return is_offered(name)

    return FunctionTool(
        name=name,
        description=definition.description,
        # A plain-JSON copy: the core's schema is shared read-only data.
        params_json_schema=json.loads(json.dumps(definition.parameters)),
        on_invoke_tool=return_stored,
        # The session validates the arguments itself; the schemas have optional
        # fields, which the Responses API's strict mode does not allow.
        strict_json_schema=False,
        is_enabled=enabled,
        needs_approval=True,
    )
