"""Model-visible tool results and the turn-failure note (design texts, kept exact)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from dex_agents_contracts import ENUM_WIRE_STRINGS, AgentToolCall, ToolCallStatus

__all__ = [
    "APPROVAL_DEADLINE_PASSED",
    "FINAL_TOOL_CALL_STATUSES",
    "NO_RESULT_TEXT",
    "OUTCOME_UNKNOWN_RESULT",
    "TOOL_CALL_NOT_RUN_ERROR_PREFIX",
    "USER_REJECTED_RESULT",
    "compact_json",
    "is_final",
    "model_visible_result",
    "tool_call_note",
    "tool_call_status_text",
    "turn_failure_note",
]

FINAL_TOOL_CALL_STATUSES = frozenset(
    {
        ToolCallStatus.REJECTED,
        ToolCallStatus.SUCCEEDED,
        ToolCallStatus.FAILED,
        ToolCallStatus.OUTCOME_UNKNOWN,
    }
)

TOOL_CALL_NOT_RUN_ERROR_PREFIX = "the tool did not run, so it is safe to call again"
"""Error prefix of a call whose Step never reached a Worker (attempt_progress NOT_STARTED)."""

APPROVAL_DEADLINE_PASSED = "approval deadline passed"
USER_REJECTED_RESULT = "The user rejected this tool call."
OUTCOME_UNKNOWN_RESULT = (
    "The tool call's outcome is unknown: it stopped without returning a result, so it may or "
    "may not have taken effect. It will not be retried automatically."
)
NO_RESULT_TEXT = "The tool call has no result: the turn ended before it finished."
"""What an unfinished turn's transcript shows for a call that never got a final record."""

_NOTE_HEADER = "[Dex] The previous turn failed after these tool calls ran:"
_NOTE_FOOTER = "Do not repeat these tool calls unless the user asks again."


def compact_json(value: Mapping[str, object]) -> str:
    """A structured result as compact JSON text (no spaces), as the design writes them."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def is_final(status: ToolCallStatus) -> bool:
    """Whether a record's status can no longer change."""
    return status in FINAL_TOOL_CALL_STATUSES


def tool_call_status_text(status: ToolCallStatus) -> str:
    """The wire string of a status (`succeeded`, `outcome_unknown`, ...)."""
    return ENUM_WIRE_STRINGS[ToolCallStatus][status]


def model_visible_result(record: AgentToolCall) -> str:
    """What the model sees for a final record, when resuming and in notes."""
    status = record.status
    if status is ToolCallStatus.SUCCEEDED:
        return record.output or ""
    if status is ToolCallStatus.FAILED:
        return f"The tool call failed: {record.error or ''}"
    if status is ToolCallStatus.REJECTED:
        return record.rejection_message or USER_REJECTED_RESULT
    if status is ToolCallStatus.OUTCOME_UNKNOWN:
        return OUTCOME_UNKNOWN_RESULT
    raise ValueError(f"tool call {record.tool_call_id!r} is not final")


def turn_failure_note(records: Iterable[AgentToolCall]) -> str | None:
    """The turn-failure note for the final records, in deferral order; None without any."""
    return tool_call_note(records, header=_NOTE_HEADER)


def tool_call_note(records: Iterable[AgentToolCall], *, header: str) -> str | None:
    """A note in the turn-failure note's line format and footer under `header`.

    Steered and cancelled turns use it with their own first line. None without
    final records.
    """
    final = sorted((r for r in records if is_final(r.status)), key=lambda r: r.deferral_order)
    if not final:
        return None
    lines = [header]
    lines.extend(
        f"- {r.tool_name} {r.arguments} -> {tool_call_status_text(r.status)}: "
        f"{model_visible_result(r)}"
        for r in final
    )
    lines.append(_NOTE_FOOTER)
    return "\n".join(lines)
