"""A tool call's values as text: the model's arguments in, the tool's output out.

Records carry arguments as JSON text and results as the text the model sees;
every adapter converts the same way, so a model sees the same result text and
the same argument errors whichever framework runs the tool.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from dex_agents._runner.values import ToolExecutionError

__all__ = ["arguments_text", "parse_tool_arguments", "tool_output_text"]


def _refuse_constant(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def parse_tool_arguments(arguments: str | None) -> dict[str, object]:
    """A call's arguments as a dict: strict JSON object text (no NaN or Infinity);
    empty text is no arguments.

    Raises:
        ToolExecutionError: `arguments must be a JSON object`, so the model sees it.
    """
    if not arguments:
        return {}
    try:
        value = json.loads(arguments, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise ToolExecutionError("arguments must be a JSON object")
    return value


def arguments_text(arguments: Mapping[str, object] | None) -> str:
    """Compact JSON text of a framework's parsed arguments, as records store them."""
    return json.dumps(dict(arguments or {}), separators=(",", ":"), ensure_ascii=False)


def tool_output_text(output: object) -> str:
    """A tool's return value as the text the model sees: text as it is, JSON for
    plain data and pydantic models, `str()` for the rest, empty for None."""
    if isinstance(output, str):
        return output
    if output is None:
        return ""
    if isinstance(output, (dict, list)):
        return json.dumps(output, separators=(",", ":"), default=str)
    dump = getattr(output, "model_dump_json", None)
    if callable(dump):
        text = dump()
        if isinstance(text, str):
            return text
    return str(output)
