"""Several deferred calls of one response, fed back one tool Step at a time.

The CLI asks the PreToolUse hook about every call of a response, also after it
deferred one, so one run may defer several calls; it reports only the last
(`deferred_tool_use`) and, resumed, re-runs only that one. So when a response
deferred several, the runner requests them one per RunModel, in the response's
order, each once the call before it has its record and without starting the
CLI; once every one has a final record it writes each model-visible result into
the transcript as a tool_result entry shaped like the CLI's own, and resumes the
CLI with the prompt the CLI's own resume adds. Each call thus gets its own
approval and tool Step after the one before it ran, as in the TypeScript
adapter (`feedback.ts`). A response with one deferred call keeps the CLI's own
resume, which re-runs the call against its record.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dex_agents.results import is_final, model_visible_result
from dex_agents.runner import DeferredToolCall, RunStateError
from dex_agents_contracts import AgentToolCall, ToolCallStatus

from dex_agents_claude_agent_sdk._transcript import (
    TranscriptEntry,
    answered_calls,
    entry_blocks,
)

__all__ = ["CONTINUE_PROMPT", "FedBack", "feed_back", "in_response_order"]

CONTINUE_PROMPT = "Continue from where you left off."
"""The prompt that resumes a turn once its deferred calls' results are in the transcript."""


def in_response_order(
    calls: Iterable[DeferredToolCall], entries: Sequence[TranscriptEntry]
) -> list[DeferredToolCall]:
    """`calls` in the order the main transcript's assistant entries asked for them."""
    asked = [
        str(block.get("id"))
        for subpath, entry in entries
        if not subpath and entry.get("type") == "assistant"
        for block in entry_blocks(entry)
        if block.get("type") == "tool_use"
    ]

    def position(call: DeferredToolCall) -> int:
        return asked.index(call.tool_call_id) if call.tool_call_id in asked else len(asked)

    return sorted(calls, key=position)


@dataclass(frozen=True)
class FedBack:
    entries: list[TranscriptEntry]
    """The turn's entries with the results written so far."""
    next: DeferredToolCall | None
    """The first deferred call without a record: the next tool Step. None: all answered."""


def feed_back(
    deferred: Sequence[DeferredToolCall],
    records: Sequence[AgentToolCall],
    entries: Sequence[TranscriptEntry],
    history: Sequence[TranscriptEntry],
    session_id: str,
) -> FedBack:
    """The turn's entries plus a result for each deferred call with a final record, in
    order, up to the first call the session has not run yet. `history` is the session's
    stored transcript before this turn.

    Raises:
        RunStateError: A deferred call's record is not final (the session resumes a
            turn only once every requested call has finished).
    """
    fed = list(entries)
    answered = answered_calls(fed)
    by_id = {record.tool_call_id: record for record in records}
    for call in deferred:
        if call.tool_call_id in answered:
            continue
        record = by_id.get(call.tool_call_id)
        if record is None:
            return FedBack(entries=fed, next=call)
        if not is_final(record.status):
            raise RunStateError(
                f"the turn has no final record of deferred tool call {call.tool_call_id!r}"
            )
        fed.append(_result_entry([*history, *fed], record, session_id))
    return FedBack(entries=fed, next=None)


def _result_entry(
    entries: Sequence[TranscriptEntry], record: AgentToolCall, session_id: str
) -> TranscriptEntry:
    """A tool_result entry for `record`, shaped like the CLI's, after the last main entry."""
    main = [
        entry for subpath, entry in entries if not subpath and isinstance(entry.get("uuid"), str)
    ]
    leaf: dict[str, Any] = main[-1] if main else {}
    source = next(
        (
            entry
            for entry in main
            if entry.get("type") == "assistant"
            and any(block.get("id") == record.tool_call_id for block in entry_blocks(entry))
        ),
        {},
    )
    content = [{"type": "text", "text": model_visible_result(record)}]
    return (
        "",
        {
            "parentUuid": leaf.get("uuid"),
            "isSidechain": False,
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "tool_use_id": record.tool_call_id,
                        "type": "tool_result",
                        "content": content,
                        "is_error": record.status is not ToolCallStatus.SUCCEEDED,
                    }
                ],
            },
            "uuid": str(uuid.uuid4()),
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "toolUseResult": content,
            "sourceToolAssistantUUID": source.get("uuid"),
            "userType": "external",
            "sessionId": session_id,
            "cwd": leaf.get("cwd"),
            "version": leaf.get("version"),
        },
    )
