"""The CLI's session transcript as Dex stores it, and its projection into messages.

The transcript is the CLI's own JSONL entries, kept whole: a turn's entries so
far ride in `FrameworkRunState` while the turn waits for deferred tools, and a
finished turn's entries ride in the `framework_item` of the turn's last stored
message. The next turn concatenates them to rebuild the session the CLI resumes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dex_agents._runner.policies import ResolvedToolPolicy
from dex_agents._runner.values import deferred_tool_call
from dex_agents.runner import DeferredToolCall, FrameworkMessage, RunStateFormat
from dex_agents_contracts import AgentMessage, MessageRole, ToolEffect

__all__ = [
    "RunState",
    "TranscriptEntry",
    "answered_calls",
    "decode_item",
    "decode_run_state",
    "encode_item",
    "encode_run_state",
    "entry_blocks",
    "project_turn",
    "session_transcript",
]

_FORMAT = "claude-agent-sdk/1"

NO_RESPONSE = "No response requested."
"""The CLI's stand-in answer to a user entry that got none (results the runner fed back),
kept in the transcript but not shown as a message of the turn."""

TranscriptEntry = tuple[str, dict[str, Any]]
"""`(subpath, entry)`: the store key's subpath ("" for the main transcript) and one JSONL line."""


@dataclass(frozen=True)
class StoredItem:
    """What one stored message's `framework_item` holds."""

    entries: list[TranscriptEntry]
    user_text: str | None = None


def encode_item(entries: Sequence[TranscriptEntry], user_text: str | None = None) -> str:
    item: dict[str, Any] = {"format": _FORMAT, "entries": [list(e) for e in entries]}
    if user_text is not None:
        item["user_text"] = user_text
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def _entries(raw: object, where: str) -> list[TranscriptEntry]:
    if not isinstance(raw, list):
        raise ValueError(f"{where}: entries is not a list")
    out: list[TranscriptEntry] = []
    for pair in raw:
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], dict)
        ):
            raise ValueError(f"{where}: an entry is not [subpath, object]")
        out.append((pair[0], pair[1]))
    return out


def decode_item(framework_item: str, *, sequence: int) -> StoredItem:
    """Raises ValueError naming the message when another runner stored it."""
    where = f"stored message {sequence}"
    try:
        item = json.loads(framework_item)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where} is not a Claude Agent SDK item: {exc}") from None
    if not isinstance(item, dict) or item.get("format") != _FORMAT:
        raise ValueError(
            f"{where} was not stored by ClaudeAgentRunner (framework_item format is not "
            f"{_FORMAT!r}); a session keeps the runner it started with"
        )
    text = item.get("user_text")
    return StoredItem(
        entries=_entries(item.get("entries"), where),
        user_text=text if isinstance(text, str) else None,
    )


# Before the envelope, a run state was a stored item's JSON: its format, its entries.
_RUN_STATE = RunStateFormat(
    adapter="claude_agent_sdk",
    framework="claude-agent-sdk",
    legacy=RunStateFormat.marked("format", _FORMAT),
)


@dataclass(frozen=True)
class RunState:
    """A turn's entries so far and, when its last response deferred several calls, those
    calls in the response's order (fed back one tool Step at a time, see `_feedback`)."""

    entries: list[TranscriptEntry]
    deferred: list[DeferredToolCall] = field(default_factory=list)


def encode_run_state(
    entries: Sequence[TranscriptEntry], deferred: Sequence[DeferredToolCall] = ()
) -> str:
    payload: dict[str, Any] = {"entries": [list(e) for e in entries]}
    if deferred:  # absent otherwise, so a one-call state reads as it always has
        payload["deferred"] = [_call_json(call) for call in deferred]
    return _RUN_STATE.encode(payload)


def decode_run_state(state: str) -> RunState:
    """Raises RunStateError for a state this runner did not write."""
    return _RUN_STATE.decode(
        state,
        lambda data: RunState(
            entries=_entries(data["entries"], "FrameworkRunState"),
            deferred=[_call(raw) for raw in data.get("deferred", [])],
        ),
    )


def _call_json(call: DeferredToolCall) -> dict[str, Any]:
    return {
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "arguments": call.arguments,
        "effect": call.effect.name,
        "requires_approval": call.requires_approval,
        "tool_source_reference": call.tool_source_reference,
    }


def _call(raw: Mapping[str, Any]) -> DeferredToolCall:
    return deferred_tool_call(
        tool_call_id=str(raw["tool_call_id"]),
        tool_name=str(raw["tool_name"]),
        arguments=str(raw["arguments"]),
        policy=ResolvedToolPolicy(
            effect=ToolEffect[str(raw["effect"])],
            requires_approval=bool(raw["requires_approval"]),
        ),
        tool_source_reference=raw.get("tool_source_reference"),
    )


@dataclass(frozen=True)
class SessionTranscript:
    entries: list[TranscriptEntry]
    """Every stored turn's entries, oldest first."""
    pending_user_texts: list[str]
    """User messages stored after the last transcript: the next prompt."""


def session_transcript(messages: Iterable[AgentMessage]) -> SessionTranscript:
    entries: list[TranscriptEntry] = []
    pending: list[str] = []
    for message in messages:
        item = decode_item(message.framework_item, sequence=message.sequence)
        if item.entries:
            entries.extend(item.entries)
            pending = []
        if item.user_text is not None:
            pending.append(item.user_text)
    return SessionTranscript(entries=entries, pending_user_texts=pending)


def entry_blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The content blocks of one transcript entry's message."""
    message = entry.get("message")
    return _blocks(message) if isinstance(message, dict) else []


def answered_calls(entries: Iterable[TranscriptEntry]) -> set[str]:
    """The IDs of the tool uses the entries hold a result for."""
    return {
        str(block.get("tool_use_id"))
        for _, entry in entries
        if entry.get("type") == "user"
        for block in entry_blocks(entry)
        if block.get("type") == "tool_result"
    }


def _blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _result_text(block: Mapping[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def project_turn(entries: Sequence[TranscriptEntry]) -> list[FrameworkMessage]:
    """The turn's stored messages: one per tool call, tool result and text, the
    last carrying the turn's whole transcript (the user prompt is stored already)."""
    messages: list[FrameworkMessage] = []
    empty = encode_item([])
    names: dict[str, str] = {}
    for subpath, entry in entries:
        if subpath or entry.get("isSidechain"):
            continue
        message = entry.get("message")
        if not isinstance(message, dict):
            continue
        if entry.get("type") == "assistant":
            for block in _blocks(message):
                if block.get("type") == "text" and block.get("text") not in ("", None, NO_RESPONSE):
                    messages.append(
                        FrameworkMessage(
                            role=MessageRole.ASSISTANT, framework_item=empty, text=block["text"]
                        )
                    )
                elif block.get("type") == "tool_use":
                    names[str(block.get("id"))] = str(block.get("name"))
                    messages.append(
                        FrameworkMessage(
                            role=MessageRole.ASSISTANT,
                            framework_item=empty,
                            tool_call_id=str(block.get("id")),
                            tool_name=str(block.get("name")),
                            tool_arguments=json.dumps(block.get("input", {}), ensure_ascii=False),
                        )
                    )
        elif entry.get("type") == "user":
            for block in _blocks(message):
                if block.get("type") == "tool_result":
                    messages.append(
                        FrameworkMessage(
                            role=MessageRole.TOOL,
                            framework_item=empty,
                            tool_call_id=str(block.get("tool_use_id")),
                            tool_name=names.get(str(block.get("tool_use_id"))),
                            tool_output=_result_text(block),
                        )
                    )
    whole = encode_item(entries)
    if not messages:
        return [FrameworkMessage(role=MessageRole.ASSISTANT, framework_item=whole, text="")]
    last = messages[-1]
    messages[-1] = FrameworkMessage(
        role=last.role,
        framework_item=whole,
        text=last.text,
        tool_call_id=last.tool_call_id,
        tool_name=last.tool_name,
        tool_arguments=last.tool_arguments,
        tool_output=last.tool_output,
    )
    return messages
