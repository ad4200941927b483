"""Context compaction for Stepwise: size estimates, safe cuts, and the summary request.

A cut never separates a tool call from its result, nor one model response's
items from each other, so the retained messages always replay as valid input.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from dex_agents_contracts import AgentMessage

from dex_agents.models import ModelMessage, UserMessage
from dex_agents.stepwise._items import (
    AssistantItem,
    Item,
    ToolCallItem,
    ToolResultItem,
    UserItem,
    item_from_message,
    item_to_json_object,
)

__all__ = [
    "DEFAULT_SUMMARY_INSTRUCTIONS",
    "approximate_tokens",
    "build_summary_messages",
    "cut_points",
    "estimate_items",
    "left_out_note",
    "select_cutoff",
]

DEFAULT_SUMMARY_INSTRUCTIONS = (
    "You summarize conversations between a user and an AI agent so the agent can "
    "continue without the full history. Keep every fact, decision, open question, "
    "commitment, and tool result the agent may still need; leave out pleasantries. "
    "Write plain text."
)
_SUMMARY_REQUEST = "Summarize the conversation above for the agent that continues it."
_PREVIOUS_SUMMARY = "[Dex] Summary of the earlier conversation:"

TokenCounter = Callable[[str], int]


def approximate_tokens(text: str) -> int:
    """About four characters a token: cheap, provider-neutral, and errs high for code."""
    return (len(text) + 3) // 4


def estimate_items(items: Sequence[Item], count: TokenCounter) -> int:
    """Counts each item as its stored `framework_item` text."""
    return sum(
        count(json.dumps(item_to_json_object(item), separators=(",", ":"), ensure_ascii=False))
        for item in items
    )


def cut_points(items: Sequence[Item]) -> list[int]:
    """Indexes `i` such that cutting after `items[i]` is safe.

    Safe means every tool call up to `i` has its result up to `i`, and `items[i + 1]`
    starts a new message rather than continuing `items[i]`'s model response.
    """
    points: list[int] = []
    open_calls: set[str] = set()
    for index, item in enumerate(items):
        if isinstance(item, ToolCallItem):
            open_calls.add(item.tool_call_id)
        elif isinstance(item, ToolResultItem):
            open_calls.discard(item.tool_call_id)
        following = items[index + 1] if index + 1 < len(items) else None
        continues_response = isinstance(following, ToolCallItem) and isinstance(
            item, AssistantItem | ToolCallItem
        )
        if not open_calls and not continues_response:
            points.append(index)
    return points


def select_cutoff(
    messages: Sequence[AgentMessage], retained_token_budget: int, count: TokenCounter
) -> int | None:
    """The last sequence to summarize: the earliest safe cut whose newer messages fit.

    The newest message always stays; None when no safe cut exists.
    """
    if len(messages) < 2:
        return None
    items = [item_from_message(m) for m in messages]
    sizes = [estimate_items([item], count) for item in items]
    candidates = [i for i in cut_points(items) if i < len(items) - 1]
    if not candidates:
        return None
    for index in candidates:
        if sum(sizes[index + 1 :]) <= retained_token_budget:
            return messages[index].sequence
    # Nothing fits the budget: keep as little as a safe cut allows.
    return messages[candidates[-1]].sequence


def left_out_note(count: int) -> str:
    if count == 1:
        return "[Dex] 1 earlier message did not fit in this request and is left out."
    return f"[Dex] {count} earlier messages did not fit in this request and are left out."


def _render(item: Item) -> str:
    """The transcript as text: the summary call offers no tools, and some providers
    refuse tool-call history in a request without tools."""
    if isinstance(item, UserItem):
        return f"User: {item.text}"
    if isinstance(item, AssistantItem):
        return f"Assistant: {item.text or ''}"
    if isinstance(item, ToolCallItem):
        return f"Assistant called tool {item.tool_name} ({item.tool_call_id}) with {item.arguments}"
    return f"Tool result of {item.tool_name} ({item.tool_call_id}): {item.output}"


def build_summary_messages(
    *,
    previous_summary: str | None,
    messages: Sequence[AgentMessage],
    budget: int,
    count: TokenCounter,
) -> list[ModelMessage]:
    """The summary request's messages, leaving out the oldest ones past `budget` tokens."""
    items = [item_from_message(m) for m in messages]
    fixed: list[str] = [_SUMMARY_REQUEST]
    if previous_summary is not None:
        fixed.append(f"{_PREVIOUS_SUMMARY}\n{previous_summary}")
    fixed_tokens = sum(count(text) for text in fixed) + count(left_out_note(len(items)))
    lines = [_render(item) for item in items]
    sizes = [count(line) + 1 for line in lines]
    start = 0
    if fixed_tokens + sum(sizes) > budget:
        # Leave out the oldest messages, up to a safe cut, until the rest fits.
        starts = [i + 1 for i in cut_points(items) if i + 1 < len(items)]
        fitting = [s for s in starts if fixed_tokens + sum(sizes[s:]) <= budget]
        start = fitting[0] if fitting else (starts[-1] if starts else 0)
    out: list[ModelMessage] = []
    if previous_summary is not None:
        out.append(UserMessage(text=f"{_PREVIOUS_SUMMARY}\n{previous_summary}"))
    if start:
        out.append(UserMessage(text=left_out_note(start)))
    transcript = "\n".join(lines[start:])
    out.append(UserMessage(text=f"{transcript}\n\n{_SUMMARY_REQUEST}"))
    return out
