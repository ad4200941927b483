"""The deferred copy of the application's agent tree, used in every RunModel Step.

ADK runs every tool of a model response as soon as the response arrives, so
the runner replaces each function tool of every agent in the tree with a
stub of the same name and declaration that ADK treats as long-running: the stub
records the arguments it was called with (after any `before_tool_callback`
edited them) and returns nothing, so ADK writes no function response and pauses
the resumable invocation with the call pending. The real tool runs in its own
Dex tool Step, and its recorded result goes back as the call's
`FunctionResponse`. `after_tool_callback`s move to the tool Step too, where they
see the real result. The copies keep the agents' names, which is how ADK finds
the agent that was running when an invocation resumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dex_agents import UserError
from google.adk.agents import BaseAgent, LlmAgent
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.base_toolset import BaseToolset
from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from dex_agents_google_adk._context import record_arguments

__all__ = ["DeclaredTool", "DeferredTool", "GatedTree", "RealTool"]


class DeclaredTool(BaseTool):
    """A declaration (name, description, JSON schema) of a tool something else runs:
    an MCP source, or the session for its built-ins. It never runs here."""

    def __init__(self, name: str, description: str, parameters: Mapping[str, Any]) -> None:
        super().__init__(name=name, description=description)
        self._parameters = dict(parameters)

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._parameters
        )

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        raise RuntimeError(f"tool {self.name!r} runs in its own Dex Step only")


class DeferredTool(BaseTool):
    """Stands in for a tool inside RunModel: same declaration, runs nothing."""

    def __init__(self, real: BaseTool) -> None:
        super().__init__(name=real.name, description=real.description, is_long_running=True)
        self._real = real

    @override
    def _get_declaration(self) -> types.FunctionDeclaration | None:
        return self._real._get_declaration()

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        record_arguments(tool_context.function_call_id or "", args)
        return None


@dataclass(frozen=True)
class RealTool:
    """An application tool, the agent that offers it, and that agent's after-tool callbacks."""

    tool: BaseTool
    agent: LlmAgent


class GatedTree:
    """The application's agent tree with every function tool deferred, plus the real tools."""

    def __init__(self, root: BaseAgent, built_ins: Sequence[BaseTool] = ()) -> None:
        """`built_ins` join every LlmAgent's tools as they are (already deferred)."""
        self.original = root
        self._built_ins = list(built_ins)
        self.tools: dict[str, RealTool] = {}
        """The real tools of every agent, by name (the first agent's wins)."""
        self.requires_approval: dict[str, object] = {}
        """Each tool's own `require_confirmation` (a bool or a callable of the arguments),
        which the runner maps to a Dex approval."""
        self.root = self._copy(root)

    def tool_names(self) -> list[str]:
        return list(self.tools)

    def add_root_tools(self, tools: list[BaseTool]) -> None:
        """Deferred tools the root agent offers besides its own (the MCP sources', which
        their source runs, so they are not among `tools`)."""
        if not isinstance(self.root, LlmAgent):
            raise UserError("mcp_sources need an LlmAgent as the root agent")
        self.root.tools = [*self.root.tools, *(DeferredTool(t) for t in tools)]

    def _copy(self, agent: BaseAgent) -> BaseAgent:
        subs = [self._copy(sub) for sub in agent.sub_agents]
        if not isinstance(agent, LlmAgent):
            return agent.clone(update={"sub_agents": subs})
        tools: list[Any] = []
        for item in agent.tools:
            if isinstance(item, BaseToolset):
                raise UserError(
                    f"agent {agent.name!r} has a toolset ({type(item).__name__}), whose tools ADK "
                    "would run inside the RunModel Step; give the agent function tools, or an "
                    "MCP server through AdkRunner(mcp_sources=...)"
                )
            tool = item if isinstance(item, BaseTool) else FunctionTool(item)
            if not isinstance(tool, FunctionTool):
                tools.append(tool)  # model-side tools (google_search, ...) and agent tools
                continue
            if tool.name not in self.tools:
                self.tools[tool.name] = RealTool(tool, agent)
                self.requires_approval[tool.name] = getattr(tool, "_require_confirmation", False)
            tools.append(DeferredTool(tool))
        tools.extend(self._built_ins)
        return agent.clone(update={"tools": tools, "sub_agents": subs, "after_tool_callback": None})
