"""Routing the calls of one model response to their Steps: ID checks and policies.

Every adapter turns the calls its framework paused on into `DeferredToolCall`s
the same way: each ID must be usable (`model_tool_call_id_problem`), an
enabled built-in is the session's, and otherwise a `ToolPolicy` (the runner's,
then the session's) wins over what the framework declares, then the default
effect. `ToolRouter` is that rule; an adapter only reads its framework.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from dex_agents_contracts import ToolEffect

from dex_agents._runner.policies import (
    BUILT_IN_TOOL_POLICY,
    ResolvedToolPolicy,
    ToolPolicy,
    resolve_tool_policy,
)
from dex_agents._runner.tool_call_ids import model_tool_call_id_problem
from dex_agents._runner.values import AgentTurnContext, DeferredToolCall, deferred_tool_call

__all__ = ["SourcedTool", "ToolRouter", "declared_approval"]


class SourcedTool(Protocol):
    """A tool a source runs (an `McpTool`): its declared effect and its reference."""

    @property
    def effect(self) -> ToolEffect | None: ...

    @property
    def reference(self) -> str: ...


class ToolRouter:
    """The calls of one RunModel Step, checked and given their policies.

    Args:
        turn: The turn; its records' IDs are taken, its policies and default apply.
        tool_policies: The runner's own policies; they win over the session's.
        default_tool_effect: The runner's default effect; None uses the session's.
        taken_ids: More IDs the turn already used (calls not yet recorded).
    """

    def __init__(
        self,
        turn: AgentTurnContext,
        *,
        tool_policies: Mapping[str, ToolPolicy] | None = None,
        default_tool_effect: ToolEffect | None = None,
        taken_ids: Iterable[str] = (),
    ) -> None:
        self.turn = turn
        self.tool_policies: Mapping[str, ToolPolicy] = {
            **turn.tool_policies,
            **(tool_policies or {}),
        }
        self.default_tool_effect = (
            default_tool_effect if default_tool_effect is not None else turn.default_tool_effect
        )
        self._used = {record.tool_call_id for record in turn.tool_calls}
        self._used.update(taken_ids)

    def claim_id(self, tool_name: str, tool_call_id: str) -> str | None:
        """Takes the call's ID for this turn; returns the problem instead when the ID
        is unusable (empty, with `/`, or used already)."""
        problem = model_tool_call_id_problem(tool_name, tool_call_id, self._used)
        if problem is None:
            self._used.add(tool_call_id)
        return problem

    def policy(
        self,
        tool_name: str,
        *,
        framework_effect: ToolEffect | None = None,
        framework_requires_approval: bool | None = None,
        policy_name: str | None = None,
    ) -> ResolvedToolPolicy:
        """The call's policy; `policy_name` is the name policies know the tool by, when
        it differs from the name the model called."""
        if tool_name in self.turn.enabled_built_in_tools:
            return BUILT_IN_TOOL_POLICY
        return resolve_tool_policy(
            policy_name or tool_name,
            tool_policies=self.tool_policies,
            framework_effect=framework_effect,
            default_effect=self.default_tool_effect,
            framework_requires_approval=framework_requires_approval,
        )

    def defer(
        self,
        tool_call_id: str,
        tool_name: str,
        arguments: str,
        *,
        framework_effect: ToolEffect | None = None,
        framework_requires_approval: bool | None = None,
        tool_source_reference: str | None = None,
        sourced: SourcedTool | None = None,
    ) -> DeferredToolCall:
        """The call as the session defers it; a `sourced` tool (MCP) brings its declared
        effect and reference.

        Raises:
            ValueError: The ID is unusable; the RunModel attempt fails and a retry
                asks the model again.
        """
        problem = self.claim_id(tool_name, tool_call_id)
        if problem is not None:
            raise ValueError(problem)
        if sourced is not None:
            framework_effect = framework_effect or sourced.effect
            tool_source_reference = tool_source_reference or sourced.reference
        return deferred_tool_call(
            tool_call_id=tool_call_id,
            tool_name=tool_name,
            arguments=arguments,
            policy=self.policy(
                tool_name,
                framework_effect=framework_effect,
                framework_requires_approval=framework_requires_approval,
            ),
            tool_source_reference=tool_source_reference,
        )


async def declared_approval(declared: object, *args: Any, **kwargs: Any) -> bool | None:
    """A framework's own approval flag for one call: True, or a (maybe async) callable
    of the call that decides. It can only add an approval, so anything else is None."""
    if declared is True:
        return True
    if not callable(declared):
        return None
    decided = declared(*args, **kwargs)
    if inspect.isawaitable(decided):
        decided = await decided
    return True if decided else None
