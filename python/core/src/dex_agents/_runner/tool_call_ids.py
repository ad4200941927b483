"""The tool-call-ID rule: non-empty, without `/`, unique within the turn.

The ID becomes part of a Dex instance key and of the idempotency key
`<flowId>/<turnId>/<toolCallId>`, so the session refuses a runner's call that
breaks it, and an adapter refuses the model's call before it gets that far.
Both read the rule here; each words the failure for its own reader.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Literal

from dex_agents_contracts import AgentToolCall

from dex_agents._runner.values import DeferredToolCall

ToolCallIdFault = Literal["empty", "slash", "reused"]

_SESSION_TEXTS: dict[ToolCallIdFault, str] = {
    "empty": "dex-agents: a tool call ID must not be empty",
    "slash": "dex-agents: tool call ID {id!r} must not contain '/'",
    "reused": "dex-agents: tool call ID {id!r} is used twice in one turn",
}
_MODEL_TEXTS: dict[ToolCallIdFault, str] = {
    "empty": "has an empty tool call ID",
    "slash": "has a tool call ID that contains '/'",
    "reused": "reuses a tool call ID of this turn; IDs must be unique within a turn",
}


def tool_call_id_fault(tool_call_id: object, used: Container[str]) -> ToolCallIdFault | None:
    """Which part of the rule `tool_call_id` breaks, given the turn's IDs so far."""
    if not isinstance(tool_call_id, str) or not tool_call_id:
        return "empty"
    if "/" in tool_call_id:
        return "slash"
    if tool_call_id in used:
        return "reused"
    return None


def invalid_tool_call_ids(
    calls: Sequence[DeferredToolCall], earlier: Sequence[AgentToolCall]
) -> str | None:
    """Why the calls' IDs break the rule (non-empty, no `/`, unique in the turn), or None.

    `earlier` are the turn's records so far; the text is the turn error the
    session records.
    """
    seen = {record.tool_call_id for record in earlier}
    for call in calls:
        fault = tool_call_id_fault(call.tool_call_id, seen)
        if fault is not None:
            return _SESSION_TEXTS[fault].format(id=call.tool_call_id)
        seen.add(call.tool_call_id)
    return None


def model_tool_call_id_problem(
    tool_name: str, tool_call_id: str, used: Container[str]
) -> str | None:
    """Why the model's call breaks the rule, worded for an adapter's error, or None.

    The adapter adds the ID to `used` once it accepts the call.
    """
    fault = tool_call_id_fault(tool_call_id, used)
    if fault is None:
        return None
    return f"the model's call of {tool_name!r} (ID {tool_call_id!r}) {_MODEL_TEXTS[fault]}"
