"""The gated copy of the application's agent graph, used in every RunModel Step.

The SDK runs a function tool without `needs_approval` as soon as the model asks
for it, even when another call of the same response waits for approval, so the
runner gates every function tool of every agent the run can reach (the starting
agent and each handoff target). A gated tool's body never runs in RunModel: once
the call's Dex record is final, the runner approves the interruption and the
body returns the stored result (`dex_agents._runner.call_results.stored_result`). The copies keep
the agents' names, which is how `RunState.from_json` finds the current agent.
Hosted tools (web search, file search, code interpreter, ...) run on the model
provider's side inside the model call; they are left as they are. Each copy also
carries the session's built-in tools (`_built_ins`), offered in the turns that
enable them. In a planning turn every tool and handoff of the application is
disabled (`hidden_while_planning`), so the model is offered write_todos alone.
"""

from __future__ import annotations

import dataclasses
import inspect
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from agents import Agent, AgentBase, FunctionTool, Handoff, RunContextWrapper, handoff
from agents.tool_context import ToolContext
from dex_agents import UserError
from dex_agents._runner.call_results import stored_result
from dex_agents._runner.plan_mode import in_planning_turn

from dex_agents_openai_agents._built_ins import built_in_tools

__all__ = ["GatedGraph", "agents_of", "hidden_while_planning"]

Enabled = bool | Callable[[RunContextWrapper[Any], Any], Any]
"""A tool's or handoff's `is_enabled`: a flag, or a (maybe async) function of the run."""
Hideable = TypeVar("Hideable", FunctionTool, Handoff[Any, Any])


def agents_of(start: Agent[Any]) -> Iterator[Agent[Any]]:
    """Every agent reachable from `start` through handoffs, each once, breadth first."""
    queue: list[Agent[Any]] = [start]
    seen: set[int] = set()
    while queue:
        agent = queue.pop(0)
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        for item in agent.handoffs:
            target = _handoff_target(item)
            if target is not None:
                queue.append(target)


def _handoff_target(item: object) -> Agent[Any] | None:
    if isinstance(item, Agent):
        return item
    if isinstance(item, Handoff):
        ref = getattr(item, "_agent_ref", None)
        target = ref() if callable(ref) else None
        return target if isinstance(target, Agent) else None
    return None


def _unless_planning(own: Enabled) -> Callable[[RunContextWrapper[Any], AgentBase[Any]], Any]:
    async def enabled(ctx: RunContextWrapper[Any], agent: AgentBase[Any]) -> bool:
        if in_planning_turn():
            return False
        if not callable(own):
            return bool(own)
        answer = own(ctx, agent)
        return bool(await answer) if inspect.isawaitable(answer) else bool(answer)

    return enabled


def hidden_while_planning(item: Hideable) -> Hideable:
    """`item`, disabled in a planning turn and otherwise as enabled as it was."""
    return dataclasses.replace(item, is_enabled=_unless_planning(item.is_enabled))


def _gated_tool(tool: FunctionTool) -> FunctionTool:
    async def return_stored(ctx: ToolContext[Any], _arguments: str) -> str:
        return stored_result(tool.name, ctx.tool_call_id)

    gated = dataclasses.replace(tool, needs_approval=True, on_invoke_tool=return_stored)
    return hidden_while_planning(gated)


class GatedGraph:
    """The application's agents with every function tool gated, plus the real tools by name.

    Built once per runner: the copies must outlive every run (handoffs refer to
    their targets weakly), and building them per Step would repeat work.
    """

    def __init__(self, start: Agent[Any]) -> None:
        self.original = start
        self.tools: dict[str, FunctionTool] = {}
        """The real function tools of every agent, by name (the first agent's wins)."""
        self.requires_approval: dict[str, object] = {}
        """Each tool's own `needs_approval`, which the runner maps to a Dex approval."""
        self._copies: dict[int, Agent[Any]] = {}
        self._built_ins = built_in_tools()
        for agent in agents_of(start):
            if agent.mcp_servers:
                raise UserError(
                    f"agent {agent.name!r} has mcp_servers, whose tools the SDK would run "
                    "inside the RunModel Step; give the agent function tools instead"
                )
            for tool in agent.tools:
                if isinstance(tool, FunctionTool) and tool.name not in self.tools:
                    self.tools[tool.name] = tool
                    self.requires_approval[tool.name] = tool.needs_approval
        self.start = self._copy(start)

    def _copy(self, agent: Agent[Any]) -> Agent[Any]:
        copied = self._copies.get(id(agent))
        if copied is not None:
            return copied
        tools = [_gated_tool(t) if isinstance(t, FunctionTool) else t for t in agent.tools]
        tools.extend(self._built_ins)
        copied = agent.clone(tools=tools, handoffs=[])
        self._copies[id(agent)] = copied  # before the handoffs: graphs may have cycles
        copied.handoffs = [self._copy_handoff(item) for item in agent.handoffs]
        return copied

    def _copy_handoff(self, item: Agent[Any] | Handoff[Any, Any]) -> Any:
        if isinstance(item, Agent):
            # The handoff the SDK would make of the agent, hidden in a planning turn.
            return handoff(self._copy(item), is_enabled=_unless_planning(True))
        target = _handoff_target(item)
        if target is None:
            return item
        gated_target = self._copy(target)
        invoke = item.on_invoke_handoff

        async def to_gated(ctx: RunContextWrapper[Any], arguments: str) -> Agent[Any]:
            reached: Agent[Any] = await invoke(ctx, arguments)
            return self._copies.get(id(reached), reached)

        copied = hidden_while_planning(dataclasses.replace(item, on_invoke_handoff=to_gated))
        copied._agent_ref = weakref.ref(gated_target)
        return copied
