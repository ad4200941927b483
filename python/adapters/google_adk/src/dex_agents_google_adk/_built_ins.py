"""The session's built-in tools as deferred tools of every agent.

The session runs ask_user, durable_wait and write_todos itself: RunModel routes
their calls to its own Steps. So every LlmAgent of the gated tree carries one
deferred tool per built-in, with the core's declaration: ADK pauses on its call
as on any deferred tool, and the session's result goes back as the call's
`FunctionResponse`. Which built-ins a turn enables is the session's choice per
turn while the tree is built once, so each tool joins a model request only
when the kit's `is_offered` says the turn offers it.
"""

from __future__ import annotations

from dex_agents._runner.built_ins import BUILT_IN_TOOL_DEFINITIONS, is_offered
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from typing_extensions import override

from dex_agents_google_adk._gating import DeclaredTool, DeferredTool

__all__ = ["built_in_tools"]


class _BuiltInTool(DeferredTool):
    @override
    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        if is_offered(self.name):
            await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)


def built_in_tools() -> list[BaseTool]:
    """One deferred tool per built-in, offered only in a turn that enables it."""
    return [
        _BuiltInTool(DeclaredTool(d.name, d.description, d.parameters))
        for d in BUILT_IN_TOOL_DEFINITIONS.values()
    ]
