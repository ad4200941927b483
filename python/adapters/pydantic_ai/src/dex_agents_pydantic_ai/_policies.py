"""Tool effects from Pydantic AI tool metadata (the kit's `ToolRouter` puts policies on top).

Pydantic AI has no effect annotation of its own. The runner reads two kinds of
metadata on `ToolDefinition.metadata`: the `dex_effect` key an application sets
(`Tool(..., metadata={"dex_effect": "read"})`), and MCP annotations that
Pydantic AI's MCP toolsets copy under `annotations` (readOnlyHint is read,
idempotentHint is idempotent_write). A tool Pydantic AI marks as needing
approval (`requires_approval=True`) needs the user's approval in Dex too, unless
a `ToolPolicy` says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping

from dex_agents import ToolEffect
from dex_agents._runner.policies import tool_effect_from_annotations, tool_effect_named
from pydantic_ai import ToolDefinition

__all__ = [
    "DEX_EFFECT_METADATA_KEY",
    "TOOL_SOURCE_REFERENCE_METADATA_KEY",
    "framework_effect",
    "tool_source_reference",
]

DEX_EFFECT_METADATA_KEY = "dex_effect"
"""`ToolDefinition.metadata` key naming a tool's effect (`read`, `idempotent_write`, ...)."""
TOOL_SOURCE_REFERENCE_METADATA_KEY = "dex_tool_source_reference"
"""`ToolDefinition.metadata` key of the text a tool source calls the tool by (MCP)."""


def tool_source_reference(tool_def: ToolDefinition | None) -> str | None:
    """The reference a sourced tool (an MCP tool) declares, stored on the call's record."""
    if tool_def is None or not tool_def.metadata:
        return None
    reference = tool_def.metadata.get(TOOL_SOURCE_REFERENCE_METADATA_KEY)
    return reference if isinstance(reference, str) else None


def framework_effect(tool_def: ToolDefinition | None) -> ToolEffect | None:
    """The effect the tool's own metadata declares, if any."""
    if tool_def is None or not tool_def.metadata:
        return None
    metadata = tool_def.metadata
    declared = metadata.get(DEX_EFFECT_METADATA_KEY)
    if isinstance(declared, ToolEffect):
        return declared
    if isinstance(declared, str):
        return tool_effect_named(declared, tool_name=tool_def.name, source=DEX_EFFECT_METADATA_KEY)
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        return tool_effect_from_annotations(annotations)
    return None
