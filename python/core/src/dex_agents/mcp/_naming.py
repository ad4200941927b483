"""Agent-facing tool names (`<server>__<tool>`) and the reference a tool Step calls by."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["MAX_TOOL_NAME_LENGTH", "ToolReference", "qualified_name", "split_qualified_name"]

MAX_TOOL_NAME_LENGTH = 64
"""Model APIs commonly cap tool names at 64 characters; a longer name is left out."""
_MCP_TOOL_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_SEPARATOR = "__"


def qualified_name(server: str, tool: str) -> str | None:
    """`<server>__<tool>`, or None when the MCP name or the result is not usable."""
    if not _MCP_TOOL_NAME.match(tool):
        return None
    name = f"{server}{_SEPARATOR}{tool}"
    return name if len(name) <= MAX_TOOL_NAME_LENGTH else None


def split_qualified_name(name: str) -> tuple[str, str] | None:
    """The server and MCP tool of a qualified name: split on the first `__` (MCP tool
    names may contain `__`, server names may not)."""
    server, separator, tool = name.partition(_SEPARATOR)
    if not separator or not server or not tool:
        return None
    return server, tool


@dataclass(frozen=True, kw_only=True)
class ToolReference:
    """What the session stores as `tool_source_reference`: server and MCP tool name."""

    server: str
    tool: str

    def encode(self) -> str:
        return json.dumps({"server": self.server, "tool": self.tool}, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> ToolReference | None:
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if not isinstance(value, dict):
            return None
        server, tool = value.get("server"), value.get("tool")
        if not (isinstance(server, str) and isinstance(tool, str)):
            return None
        return cls(server=server, tool=tool)
