"""The snapshot a UI reads: the wire JSON without the fields only the session's Steps use."""

from __future__ import annotations

import json
from typing import Any

from dex_agents_contracts import AgentSnapshot, encode_agent_snapshot

__all__ = ["STEP_ONLY_MESSAGE_FIELDS", "STEP_ONLY_TOOL_CALL_FIELDS", "ui_snapshot_json"]

STEP_ONLY_MESSAGE_FIELDS = ("framework_item",)
STEP_ONLY_TOOL_CALL_FIELDS = (
    "tool_source_reference",
    "trace_context",
    "input_continuation",
    "input_answers",
    "task_answer_pending",
)


def ui_snapshot_json(snapshot: AgentSnapshot) -> dict[str, Any]:
    """The snapshot's wire JSON as an object, minus the Step-only fields.

    Framework items are the bulk of a long session's snapshot and mean nothing to a
    browser; tool sources, traces, continuations and task answers are Step plumbing
    a UI must not come to depend on.
    """
    value: dict[str, Any] = json.loads(encode_agent_snapshot(snapshot))
    for message in value["messages"]:
        for name in STEP_ONLY_MESSAGE_FIELDS:
            message.pop(name, None)
    for record in value["tool_calls"]:
        for name in STEP_ONLY_TOOL_CALL_FIELDS:
            record.pop(name, None)
    return value
