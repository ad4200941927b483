"""`AgentDefinition`: what a Stepwise agent is (instructions, tools, model, hooks)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from dex_agents_contracts import InteractionMode

from dex_agents.models import ModelClient, ModelSettings
from dex_agents.stepwise._compaction import DEFAULT_SUMMARY_INSTRUCTIONS, approximate_tokens
from dex_agents.stepwise._continuation import TurnContinuationHook
from dex_agents.stepwise._sources import ToolSource
from dex_agents.stepwise._tools import Tool

__all__ = ["AgentDefinition", "InstructionContext", "Instructions", "ModelResolver"]


@dataclass(frozen=True, kw_only=True)
class InstructionContext:
    """What an instructions function may base the system prompt on."""

    session_settings: Mapping[str, object]
    """The turn's session settings (`{}` when none)."""
    flow_id: str
    turn_id: str
    interaction_mode: InteractionMode = InteractionMode.CHAT


Instructions: TypeAlias = str | Callable[[InstructionContext], str | Awaitable[str]]
ModelResolver: TypeAlias = Callable[[Mapping[str, object]], ModelClient]
"""Maps the turn's session settings to the client of one model call."""


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    """A Stepwise agent. Give exactly one of `model` and `model_resolver`."""

    name: str = "agent"
    """Names the agent in traces."""
    instructions: Instructions | None = None
    """The system prompt, or a function of `InstructionContext` that returns it."""
    tools: Sequence[Tool | Callable[..., object]] = ()
    """Tools, or plain functions made into tools with `tool(f)` (no policy)."""
    tool_sources: Sequence[ToolSource] = ()
    """Sources of tools listed at run time (e.g. `dex_agents.mcp.McpToolSource`)."""
    model: ModelClient | None = None
    model_resolver: ModelResolver | None = None
    model_settings: ModelSettings = field(default_factory=ModelSettings)
    decide_turn_continuation: TurnContinuationHook | None = None
    """Called after every model response; see `TurnContinuationDecision`."""
    planning_tool_choice: Literal["auto", "required"] = "auto"
    """`required` forces write_todos on a planning turn's first model call while no
    draft exists; it needs a client whose `supports_forced_tool_choice` is true."""
    summary_instructions: str = DEFAULT_SUMMARY_INSTRUCTIONS
    """The system prompt of the context-summary model call (compaction)."""
    count_tokens: Callable[[str], int] = approximate_tokens
    """Estimates a text's tokens for compaction; about four characters a token by default."""

    def __post_init__(self) -> None:
        if (self.model is None) == (self.model_resolver is None):
            raise ValueError("`AgentDefinition` needs exactly one of `model` and `model_resolver`")
        if self.planning_tool_choice not in ("auto", "required"):
            raise ValueError(
                f"`planning_tool_choice` must be 'auto' or 'required', "
                f"not {self.planning_tool_choice!r}"
            )
        tools = tuple(t if isinstance(t, Tool) else Tool(t) for t in self.tools)
        seen: set[str] = set()
        for item in tools:
            if not item.name:
                raise ValueError("a tool needs a non-empty name")
            if item.name in seen:
                raise ValueError(f"two tools are named {item.name!r}")
            seen.add(item.name)
        # Frozen: normalize once here so every later reader sees Tool objects.
        object.__setattr__(self, "tools", tools)
        object.__setattr__(self, "tool_sources", tuple(self.tool_sources))

    @property
    def agent_tools(self) -> Sequence[Tool]:
        """The tools as `Tool` objects."""
        return tuple(t for t in self.tools if isinstance(t, Tool))

    def tool_named(self, name: str) -> Tool | None:
        return next((t for t in self.agent_tools if t.name == name), None)

    def resolve_model(self, settings: Mapping[str, object]) -> ModelClient:
        """The client of one model call for these session settings."""
        if self.model_resolver is not None:
            return self.model_resolver(settings)
        if self.model is None:  # excluded by __post_init__
            raise ValueError("`AgentDefinition` has no model")
        return self.model

    async def render_instructions(self, context: InstructionContext) -> str | None:
        if self.instructions is None or isinstance(self.instructions, str):
            return self.instructions
        result = self.instructions(context)
        if inspect.isawaitable(result):
            result = await result
        return result
